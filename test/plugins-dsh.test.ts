/**
 * The DeepSeek Harness plugin (plugins/dsh) is its own package with its own lockfile: its tests
 * run on the real `@deepseek-ai/*` rc.8 packages installed there, not in the root (the root's
 * `npm ci` installs them, through its `postprepare`). This runs its suite as part of `npm test`,
 * and skips, saying why, when those packages are not installed.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const directory = fileURLToPath(new URL('../plugins/dsh/', import.meta.url));
const installed = existsSync(join(directory, 'node_modules', '@deepseek-ai', 'dsh-session', 'package.json'));

describe('plugins/dsh', () => {
  it('passes its own suite on the real DeepSeek Harness packages', {
    skip: installed
      ? false
      : 'plugins/dsh/node_modules is absent (installed with --ignore-scripts?): run `npm ci --prefix plugins/dsh` to include the plugin suite',
    timeout: 120_000,
  }, () => {
    const env = { ...process.env };
    delete env['NODE_TEST_CONTEXT']; // the child is a test run of its own, not a subtest of this one
    const build = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: directory, env, encoding: 'utf8' });
    assert.equal(build.status, 0, build.stderr);
    const files = readdirSync(join(directory, 'test'))
      .filter((name) => name.endsWith('.test.ts'))
      .map((name) => join('test', name));
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=tap', ...files], {
      cwd: directory,
      env,
      encoding: 'utf8',
      timeout: 110_000,
    });
    const passed = Number(/^# pass (\d+)$/m.exec(run.stdout)?.[1] ?? 0);
    const failed = Number(/^# fail (\d+)$/m.exec(run.stdout)?.[1] ?? -1);
    assert.equal(
      run.status,
      0,
      `${run.stdout
        .split('\n')
        .filter((line) => /^\s*not ok|^# (pass|fail)/.test(line))
        .join('\n')}\n${run.stderr}`,
    );
    assert.equal(failed, 0);
    assert.ok(passed >= 29, `expected the whole plugin suite to run, saw ${passed} passing tests`);
  });
});
