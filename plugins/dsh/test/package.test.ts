import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { crashedSession, createAgent, createHost, createSession, runTurn } from './harness.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as Record<string, any>;
const bundlePath = new URL('../lib/index.js', import.meta.url);
if (!existsSync(bundlePath)) execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: root });
const bundle = readFileSync(bundlePath, 'utf8');

describe('the package as `dsh plugin add` installs it', () => {
  it('declares a dsh bundle whose patch layer mounts this package', () => {
    assert.equal(pkg.dsh.bundle.patch, './cordis.patch.yml');
    const patch = readFileSync(new URL('../cordis.patch.yml', import.meta.url), 'utf8');
    assert.match(patch, /^- insert:\n {4}- id: unstuck\n {6}name: unstuck-dsh$/m);
    assert.equal(pkg.name, 'unstuck-dsh');
    assert.ok(pkg.files.includes('lib') && pkg.files.includes('cordis.patch.yml'));
  });

  it('takes the host packages as peers only (a private copy is what crashes `prepare`)', () => {
    assert.deepEqual(Object.keys(pkg.peerDependencies).sort(), [
      '@deepseek-ai/cordis',
      '@deepseek-ai/dsh-llm',
      '@deepseek-ai/dsh-session',
      '@deepseek-ai/schemastery',
    ]);
    assert.equal(pkg.dependencies, undefined);
    for (const [name, version] of Object.entries(pkg.devDependencies as Record<string, string>)) {
      assert.match(version, /^\d+\.\d+\.\d+(-[\w.]+)?$/, `${name} is pinned exactly`);
    }
  });

  it("ships one bundle with the core inside: its only imports are the host's dsh-llm and schemastery", () => {
    const imports = [...bundle.matchAll(/^import .* from "([^"]+)";$/gm)].map((match) => match[1]);
    assert.deepEqual([...new Set(imports)].sort(), ['@deepseek-ai/dsh-llm', '@deepseek-ai/schemastery']);
    assert.doesNotMatch(bundle, /from "node:|require\(|from "\.{1,2}\//);
    assert.match(bundle, /function repair\(/);
    assert.match(bundle, /function classifyError\(/);
  });

  it('loads from the bundle as a cordis plugin and recovers a crashed session', async () => {
    const module = (await import(bundlePath.href)) as {
      name: string;
      inject: unknown;
      Config: (value: object) => object;
      apply: unknown;
    };
    assert.equal(module.name, 'unstuck-dsh');
    assert.deepEqual(module.inject, []);
    assert.deepEqual(module.Config({}), { enabled: true });
    assert.equal(typeof module.apply, 'function');
    const host = await createHost({}, module);
    const agent = createAgent(createSession());
    await crashedSession(host, agent);
    assert.equal(agent.woken, 1);
    const woken = await runTurn(host, agent, [{ text: 'The tool failed.' }]);
    assert.equal(woken.end.kind, 'completed');
    assert.deepEqual(woken.failures, []);
    await host.dispose();
  });
});
