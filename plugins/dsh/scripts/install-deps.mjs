// The root's `postprepare`: installs the DeepSeek Harness plugin's own dependencies from its own
// lockfile, so that `npm ci && npm test` at the repository root runs the plugin's suite too.
// Why postprepare, and when this does nothing: docs/decisions/plugin-install-from-root.md.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const plugin = fileURLToPath(new URL('..', import.meta.url));
const root = resolve(plugin, '..', '..');
const env = process.env;

function skipReason() {
  // A package built from this repository carries no plugins/ folder; nothing to install.
  if (!existsSync(join(plugin, 'package-lock.json'))) return 'no plugin lockfile';
  // npm sets this while it prepares a git dependency (pacote's `npm install` in the clone).
  if (env['_PACOTE_NO_PREPARE_'] !== undefined) return 'unstuck is being prepared as a git dependency';
  // The project being installed is someone else's: unstuck is one of its dependencies.
  if (env['npm_config_local_prefix'] === undefined || resolve(env['npm_config_local_prefix']) !== root)
    return 'not the root project';
  const command = env['npm_command'];
  if (command === 'ci') return undefined; // a clean install: the plugin's too, from its lockfile
  if (command === 'install')
    return existsSync(join(plugin, 'node_modules')) ? 'plugins/dsh/node_modules exists' : undefined;
  return `npm ${command ?? '(unknown command)'} does not install`;
}

const why = skipReason();
if (why === undefined) {
  console.log("unstuck: installing the DeepSeek Harness plugin's test dependencies (npm ci --prefix plugins/dsh)");
  // The same npm that runs this script; `--prefix` so the plugin's package.json and lockfile are the ones used.
  const npm = env['npm_execpath'];
  const [file, args] = npm !== undefined && /npm-cli\.js$/.test(npm) ? [process.execPath, [npm]] : ['npm', []];
  const run = spawnSync(file, [...args, 'ci', '--prefix', plugin], { cwd: root, stdio: 'inherit' });
  if (run.status !== 0) {
    console.error(
      `unstuck: plugins/dsh: npm ci failed (${run.error?.message ?? `exit ${run.status ?? run.signal}`}); the plugin suite will be skipped until it succeeds`,
    );
    process.exit(1);
  }
}
