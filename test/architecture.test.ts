import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';

/**
 * Dependencies point inward: the core is pure (no node:*, no packages, nothing outside core/);
 * the outer layers import the core and not each other, except the agent (which saves through the
 * session store) and the CLI (the composition root).
 */
const root = new URL('../src/', import.meta.url).pathname;
const allowed: Record<string, string[]> = {
  core: ['core'],
  session: ['core', 'session'],
  emulator: ['core', 'emulator'],
  http: ['core', 'http'],
  agent: ['core', 'session', 'agent'],
};

function files(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : [];
  });
}

test('imports point inward', () => {
  const problems: string[] = [];
  for (const file of files(root)) {
    const layer = relative(root, file).split('/')[0] as string;
    const permitted = allowed[layer];
    if (permitted === undefined) continue; // cli/, index.ts: the composition root
    const source = readFileSync(file, 'utf8');
    for (const match of source.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s+'([^']+)'/g)) {
      const specifier = match[1] as string;
      if (specifier.startsWith('.')) {
        const target = relative(root, join(file, '..', specifier)).split('/')[0] as string;
        if (!permitted.includes(target)) problems.push(`${relative(root, file)} imports ${specifier} (${layer} may import ${permitted.join(', ')})`);
      } else if (layer === 'core') {
        problems.push(`${relative(root, file)} imports '${specifier}': the core imports nothing outside itself`);
      }
    }
    if (layer === 'core' && /\b(process|Date\.now|Math\.random|fetch|setTimeout)\b\s*[.(]/.test(source.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, ''))) {
      problems.push(`${relative(root, file)} touches the clock, randomness, the process or the network`);
    }
  }
  assert.deepEqual(problems, []);
});
