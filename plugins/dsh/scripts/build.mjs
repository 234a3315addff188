// Bundle the plugin and the repository's core (../../src/core) into one ESM file, lib/index.js.
// The host packages stay imports: they must resolve to the harness's own instances (peers).

import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
await rm(new URL('../lib', import.meta.url), { recursive: true, force: true });
const result = await build({
  absWorkingDir: root,
  entryPoints: ['src/index.ts'],
  bundle: true,
  format: 'esm',
  platform: 'neutral',
  target: 'es2022',
  outfile: 'lib/index.js',
  external: ['@deepseek-ai/*'],
  logLevel: 'warning',
  metafile: true,
});
const inputs = Object.keys(result.metafile.inputs);
const stray = inputs.filter((input) => !input.startsWith('src/') && !input.startsWith('../../src/core/'));
if (stray.length > 0) throw new Error(`unexpected inputs in the bundle: ${stray.join(', ')}`);
console.log(
  `lib/index.js: ${inputs.length} modules bundled (${inputs.filter((input) => input.startsWith('../../src/core/')).length} from the core)`,
);
