import assert from 'node:assert/strict';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import type { Io } from '../../src/cli/io.js';
import { run } from '../../src/cli/run.js';
import { formatTranscript, parseTranscript } from '../../src/session/index.js';
import { asJson, DUMPED_WITH_LINE_NUMBERS, temporaryDirectory, toolLoopSession } from './helpers.js';

function captureIo(cwd: string, stdin = ''): Io & { out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return {
    stdout: { write: (text: string) => (out += text) },
    stderr: { write: (text: string) => (err += text) },
    stdin: Readable.from([Buffer.from(stdin)]),
    env: {},
    cwd,
    out: () => out,
    err: () => err,
  };
}

const messages = asJson([
  ...toolLoopSession(3),
  { role: 'tool', tool_call_id: 'x', content: DUMPED_WITH_LINE_NUMBERS },
]);

describe('unstuck convert', () => {
  it('converts .json -> .md -> .jsonl -> .json without losing a byte of any message', async () => {
    const directory = await temporaryDirectory();
    try {
      const json = join(directory.path, 'history.json');
      await writeFile(json, JSON.stringify(messages));
      const steps: [string, string][] = [
        [json, join(directory.path, 'session.md')],
        [join(directory.path, 'session.md'), join(directory.path, 'journal.jsonl')],
        [join(directory.path, 'journal.jsonl'), join(directory.path, 'back.json')],
      ];
      for (const [input, output] of steps) {
        const io = captureIo(directory.path);
        assert.equal(await run(['convert', input, output], io), 0, io.err());
        assert.match(io.err(), new RegExp(`${messages.length} messages written`));
      }
      assert.deepEqual(JSON.parse(await readFile(join(directory.path, 'back.json'), 'utf8')), messages);
      assert.deepEqual((await readdir(directory.path)).sort(), [
        'back.json',
        'history.json',
        'journal.jsonl',
        'session.md',
      ]);
    } finally {
      await directory.dispose();
    }
  });

  it('reads a request body and writes to stdout in the format --to names', async () => {
    const directory = await temporaryDirectory();
    try {
      const body = join(directory.path, 'request.json');
      await writeFile(body, JSON.stringify({ model: 'deepseek-chat', messages }));
      const io = captureIo(directory.path);
      assert.equal(await run(['convert', body, '-', '--to', 'md'], io), 0, io.err());
      assert.deepEqual(parseTranscript(io.out()), { messages, problems: [] });
      assert.equal(io.err(), '');
    } finally {
      await directory.dispose();
    }
  });

  it('reads a transcript from stdin with --from md', async () => {
    const io = captureIo('/', formatTranscript(messages));
    assert.equal(await run(['convert', '-', '-', '--from', 'md', '--to', 'jsonl'], io), 0, io.err());
    assert.deepEqual(
      io
        .out()
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line)),
      messages,
    );
  });

  it('lists what a damaged input lost, converts the rest, and exits 1', async () => {
    const directory = await temporaryDirectory();
    try {
      const damaged = join(directory.path, 'damaged.jsonl');
      await writeFile(
        damaged,
        '{"role":"user","content":"kept"}\n{"role":"assis\n{"role":"assistant","content":"also kept"}\n',
      );
      const io = captureIo(directory.path);
      assert.equal(await run(['convert', damaged, '-'], io), 1);
      assert.deepEqual(JSON.parse(io.out()), [
        { role: 'user', content: 'kept' },
        { role: 'assistant', content: 'also kept' },
      ]);
      assert.match(io.err(), /^unstuck convert: .*damaged\.jsonl:2: corrupt line/);
    } finally {
      await directory.dispose();
    }
  });

  it('refuses bad usage with one line and exit 2', async () => {
    for (const argv of [
      ['convert', 'only-one.json'],
      ['convert', 'a.json', 'b.txt'],
      ['convert', 'a.json', '-', '--to', 'yaml'],
      ['convert', '/nonexistent/a.json', '-'],
    ]) {
      const io = captureIo('/');
      assert.equal(await run(argv, io), 2, argv.join(' '));
      assert.equal(io.err().trim().split('\n').length, 1, io.err());
      assert.match(io.err(), /^unstuck convert/);
    }
  });
});
