import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { Message } from '../../src/core/messages.js';
import { createJournalStore, formatJournal, parseJournal } from '../../src/session/index.js';
import { readJournalFile } from '../../src/session/journal-reader.js';
import { adversarialMessage, asJson, temporaryDirectory, toolLoopSession, withStore } from './helpers.js';

/** Piece sizes that cut lines everywhere: inside a line, at its break, longer than several lines. */
const CHUNKS = [1, 2, 3, 5, 17, 64, 1000, undefined];

async function withFile(bytes: Buffer | string, body: (path: string) => Promise<void>): Promise<void> {
  const directory = await temporaryDirectory();
  try {
    const path = join(directory.path, 'session.jsonl');
    await writeFile(path, bytes);
    await body(path);
  } finally {
    await directory.dispose();
  }
}

/** Reads in pieces of `chunkBytes`, each parsed in groups of `groupBytes`: a line at a time, a few lines, or the default. */
async function readInPieces(path: string, chunkBytes: number | undefined, groupBytes?: number) {
  return readJournalFile(path, {
    ...(chunkBytes === undefined ? {} : { chunkBytes }),
    ...(groupBytes === undefined ? {} : { groupBytes }),
  });
}

const GROUPS = [1, 200, undefined];

/** Lines that damage a journal: torn, corrupt, blank, CRLF, JSON that is not a message. */
const damage = fc.constantFrom(
  '{"role":"user","content":"cut',
  '{"role":',
  '',
  '   ',
  '\r',
  '[1,2]',
  '{"content":"no role"}',
  '{"role":"user"},{"role":"user"}',
  'not json at all',
);

describe('readJournalFile (the journal read in pieces)', () => {
  it('reads whatever the file holds exactly as parseJournal reads its text, for any piece size', async () => {
    const line = fc.oneof(
      adversarialMessage.map((message) => formatJournal([message]).slice(0, -1)),
      damage,
    );
    const file = fc.tuple(
      fc.array(line, { maxLength: 12 }),
      fc.constantFrom('\n', '\r\n'),
      fc.boolean(),
      fc.option(damage, { nil: undefined }),
    );
    await fc.assert(
      fc.asyncProperty(file, async ([lines, lineBreak, finalBreak, tail]) => {
        let text = lines.join(lineBreak) + (finalBreak && lines.length > 0 ? lineBreak : '');
        if (tail !== undefined) text += tail;
        await withFile(text, async (path) => {
          const expected = parseJournal(text, { file: path });
          for (const chunkBytes of CHUNKS) {
            for (const groupBytes of GROUPS)
              assert.deepEqual(
                await readInPieces(path, chunkBytes, groupBytes),
                expected,
                `pieces of ${chunkBytes ?? 'default'} bytes, groups of ${groupBytes ?? 'default'}`,
              );
          }
        });
      }),
      { numRuns: 120, seed: 17 },
    );
  });

  it('reports a torn last line and a corrupt middle line by their numbers when pieces cut them', async () => {
    const messages = asJson(toolLoopSession(3));
    const lines = formatJournal(messages).split('\n').slice(0, -1);
    lines[4] = lines[4]!.slice(0, 30);
    const text = `${lines.join('\n')}\n{"role":"assistant","content":"cut sh`;
    await withFile(text, async (path) => {
      for (const chunkBytes of CHUNKS) {
        const loaded = await readInPieces(path, chunkBytes);
        assert.deepEqual(
          loaded.messages,
          messages.filter((_message, index) => index !== 4),
          `pieces of ${chunkBytes}`,
        );
        assert.equal(loaded.problems.length, 2);
        assert.equal(loaded.problems[0]!.line, 5);
        assert.match(loaded.problems[0]!.why, /^corrupt line, not JSON/);
        assert.deepEqual(loaded.problems[1], {
          file: path,
          line: messages.length + 1,
          why: 'the last line is cut short (an append that did not finish): ignored',
        });
      }
    });
  });

  it('keeps a last line that is whole without its line break, and a line many pieces long', async () => {
    const messages: Message[] = [
      { role: 'user', content: `${'会话 '.repeat(30_000)}😀` },
      { role: 'assistant', content: 'ok' },
    ];
    await withFile(formatJournal(messages).slice(0, -1), async (path) => {
      for (const chunkBytes of [7, 4096, undefined]) {
        for (const groupBytes of GROUPS)
          assert.deepEqual(await readInPieces(path, chunkBytes, groupBytes), { messages, problems: [] });
      }
    });
  });

  it('lists lines that are not UTF-8 after the other problems, by their numbers, and loads them with U+FFFD', async () => {
    const good = Buffer.from(formatJournal([{ role: 'user', content: 'a' }]));
    const bad = Buffer.concat([
      Buffer.from('{"role":"user","content":"b'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}\n'),
    ]);
    const bytes = Buffer.concat([good, bad, Buffer.from('corrupt\n'), good, bad]);
    await withFile(bytes, async (path) => {
      for (const chunkBytes of CHUNKS) {
        const loaded = await readInPieces(path, chunkBytes);
        assert.deepEqual(loaded.messages, [
          { role: 'user', content: 'a' },
          { role: 'user', content: 'b\ufffd\ufffd' },
          { role: 'user', content: 'a' },
          { role: 'user', content: 'b\ufffd\ufffd' },
        ]);
        assert.deepEqual(
          loaded.problems.map((problem) => [problem.line, problem.why.slice(0, 12)]),
          [
            [3, 'corrupt line'],
            [2, 'line is not '],
            [5, 'line is not '],
          ],
        );
      }
    });
  });
});

describe('createJournalStore: the tail before the first append', () => {
  it('cuts off a torn last line longer than one read from the end, and appends after the rest', async () => {
    await withStore('session.jsonl', createJournalStore, async ({ store, path }) => {
      const messages = asJson(toolLoopSession(2));
      await writeFile(path, `${formatJournal(messages)}{"role":"user","content":"${'x'.repeat(200_000)}`);
      await store.append!([{ role: 'user', content: 'next' }]);
      assert.deepEqual(await store.load(), {
        messages: [...messages, { role: 'user', content: 'next' }],
        problems: [],
      });
    });
  });

  it('gives a whole last message its lost line break', async () => {
    await withStore('session.jsonl', createJournalStore, async ({ store, path }) => {
      const messages = asJson(toolLoopSession(1));
      await writeFile(path, formatJournal(messages).slice(0, -1));
      await store.append!([{ role: 'user', content: 'next' }]);
      assert.equal(await readFile(path, 'utf8'), formatJournal([...messages, { role: 'user', content: 'next' }]));
    });
  });
});
