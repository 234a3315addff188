import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Tool } from '../../src/agent/index.js';
import { createBuiltinTools } from '../../src/chat/tools/builtin-tools.js';
import type { Confirm } from '../../src/chat/tools/confirm.js';
import { allowAll, denyAll } from '../../src/chat/tools/confirm.js';
import { TOOL_OUTPUT_LIMIT } from '../../src/chat/tools/limit-text.js';

let root: string;
let outside: string;
const signal = new AbortController().signal;

function tools(
  confirm: Confirm = allowAll,
  env: Record<string, string | undefined> = { PATH: process.env.PATH },
): Record<string, Tool> {
  return Object.fromEntries(createBuiltinTools({ root, confirm, env }).map((tool) => [tool.name, tool]));
}

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'unstuck-chat-tools-'));
  outside = await mkdtemp(join(tmpdir(), 'unstuck-chat-outside-'));
  await writeFile(join(outside, 'secret.txt'), 'secret');
  await mkdir(join(root, 'src'));
  await writeFile(join(root, 'src', 'a.ts'), 'const alpha = 1;\nconst beta = 2;\n');
  await writeFile(join(root, 'notes.md'), 'one\ntwo\nthree\nfour\n');
  await symlink(outside, join(root, 'escape'));
});

after(async () => {
  await rm(root, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

describe('the built-in tools', () => {
  it('offer six tools with JSON-schema parameters', () => {
    assert.deepEqual(Object.keys(tools()).sort(), [
      'edit_file',
      'list_directory',
      'read_file',
      'run_command',
      'search_text',
      'write_file',
    ]);
    for (const tool of Object.values(tools())) assert.equal((tool.parameters as { type: string }).type, 'object');
  });

  it('read a file, whole or by lines, and accept arguments as a JSON string', async () => {
    assert.equal(await tools().read_file!.run({ path: 'notes.md' }, { signal }), 'one\ntwo\nthree\nfour\n');
    assert.equal(
      await tools().read_file!.run('{"path":"notes.md","offset":2,"limit":2}', { signal }),
      '[lines 2-3 of 5]\ntwo\nthree',
    );
  });

  it('refuse every path outside the working directory, symbolic links included', async () => {
    for (const path of ['../x', '/etc/passwd', join(outside, 'secret.txt'), 'escape/secret.txt']) {
      await assert.rejects(tools().read_file!.run({ path }, { signal }), /outside the working directory/, path);
    }
    await assert.rejects(
      tools().write_file!.run({ path: 'escape/new.txt', content: 'x' }, { signal }),
      /outside the working directory/,
    );
    await assert.rejects(tools().list_directory!.run({ path: '..' }, { signal }), /outside the working directory/);
  });

  it('cut large output and say so', async () => {
    await writeFile(join(root, 'big.txt'), 'x'.repeat(TOOL_OUTPUT_LIMIT * 3));
    const text = await tools().read_file!.run({ path: 'big.txt' }, { signal });
    assert.ok(text.length < TOOL_OUTPUT_LIMIT + 100);
    assert.match(text, /characters left out/);
  });

  it('list a directory with folders marked', async () => {
    const listing = await tools().list_directory!.run({}, { signal });
    assert.deepEqual(
      listing.split('\n').filter((name) => name !== 'big.txt'),
      ['escape', 'notes.md', 'src/'],
    );
  });

  it('search text literally or by regular expression', async () => {
    assert.equal(await tools().search_text!.run({ pattern: 'beta' }, { signal }), 'src/a.ts:2: const beta = 2;');
    assert.equal(
      await tools().search_text!.run({ pattern: '^const \\w+ = 1', regex: true, path: 'src' }, { signal }),
      'src/a.ts:1: const alpha = 1;',
    );
    assert.equal(await tools().search_text!.run({ pattern: 'nowhere-to-be-found' }, { signal }), 'no matches');
  });

  it('write and edit only when confirmed', async () => {
    const asked: string[] = [];
    const recording: Confirm = async (request) => {
      asked.push(request.action);
      return false;
    };
    await assert.rejects(
      tools(recording).write_file!.run({ path: 'out/new.txt', content: 'hello' }, { signal }),
      /not allowed by the user/,
    );
    await assert.rejects(readFile(join(root, 'out', 'new.txt')));
    const declining = tools(denyAll);
    await declining.read_file!.run({ path: 'notes.md' }, { signal });
    await assert.rejects(
      declining.edit_file!.run({ path: 'notes.md', old_text: 'two', new_text: '2' }, { signal }),
      /not allowed/,
    );
    assert.deepEqual(asked, ['create out/new.txt (5 bytes)']);

    const allowed = tools();
    assert.equal(
      await allowed.write_file!.run({ path: 'out/new.txt', content: 'hello' }, { signal }),
      'wrote 5 bytes to out/new.txt',
    );
    assert.equal(await readFile(join(root, 'out', 'new.txt'), 'utf8'), 'hello');
    await allowed.read_file!.run({ path: 'notes.md' }, { signal });
    assert.equal(
      await allowed.edit_file!.run({ path: 'notes.md', old_text: 'two', new_text: '2' }, { signal }),
      'edited notes.md at line 2',
    );
    assert.equal(await readFile(join(root, 'notes.md'), 'utf8'), 'one\n2\nthree\nfour\n');
  });

  it('edit only a text that occurs exactly once', async () => {
    await writeFile(join(root, 'twice.txt'), 'same\nsame\n');
    const set = tools();
    await set.read_file!.run({ path: 'twice.txt' }, { signal });
    await assert.rejects(
      set.edit_file!.run({ path: 'twice.txt', old_text: 'same', new_text: 'x' }, { signal }),
      /more than once/,
    );
    await assert.rejects(
      set.edit_file!.run({ path: 'twice.txt', old_text: 'absent', new_text: 'x' }, { signal }),
      /not found/,
    );
  });

  it('run a command in the working directory, without the provider keys, and report its exit code', async () => {
    const env = { PATH: process.env.PATH, DEEPSEEK_API_KEY: 'sk-hidden', EDITOR: 'yes' };
    const result = await tools(allowAll, env).run_command!.run(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, not a template
      { command: 'pwd; echo "key=${DEEPSEEK_API_KEY:-none} visible=$EDITOR"; exit 3' },
      { signal },
    );
    const lines = result.split('\n');
    assert.equal(lines[0], 'exit code 3');
    assert.match(lines[1] ?? '', /unstuck-chat-tools-/);
    assert.equal(lines[2], 'key=none visible=yes');
    await assert.rejects(tools(denyAll).run_command!.run({ command: 'echo no' }, { signal }), /not allowed/);
  });

  it('stop a running command when the turn is aborted, and when it runs too long', async () => {
    const controller = new AbortController();
    const started = Date.now();
    const running = tools().run_command!.run({ command: 'sleep 30' }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 200);
    await assert.rejects(running, /aborted/);
    assert.ok(Date.now() - started < 5000);
    assert.match(
      await tools().run_command!.run({ command: 'sleep 30', timeout_ms: 200 }, { signal }),
      /^timed out after 200 ms/,
    );
  });
});
