import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { run } from '../../src/cli/run.js';
import type { Message } from '../../src/index.js';
import { createTranscriptStore, parseTranscript } from '../../src/session/index.js';
import { formatTranscriptText } from '../../src/session/transcript-writer.js';
import { captureIo } from '../support/capture-io.js';

const ten: Message[] = Array.from(
  { length: 10 },
  (_, index) => ({ role: index % 2 === 0 ? 'user' : 'assistant', content: `message ${index + 1}` }) as Message,
);
let directory = '';
const path = (name: string) => join(directory, name);

before(async () => {
  directory = await mkdtemp(join(tmpdir(), 'unstuck-hand-edits-'));
});
after(async () => {
  await rm(directory, { recursive: true, force: true });
});

const contents = (messages: readonly Message[]) => messages.map((message) => message.content);
/** A transcript as the store writes its main file: with the digest of its readable text. */
const formatTranscript = (messages: readonly Message[]) =>
  formatTranscriptText(messages, { first: 1, total: messages.length, segments: [], readableDigest: true });

describe('a transcript edited by hand', () => {
  test('a message added by hand between two messages is read, in its place, and reported with its line', () => {
    const text = formatTranscript(ten).replace(
      '## 4 · assistant',
      '## 3b · user\n\nI wrote this one myself.\n\n## 4 · assistant',
    );
    const loaded = parseTranscript(text);
    assert.deepEqual(contents(loaded.messages), [
      'message 1',
      'message 2',
      'message 3',
      'I wrote this one myself.',
      ...contents(ten.slice(3)),
    ]);
    assert.deepEqual(loaded.messages[3], { role: 'user', content: 'I wrote this one myself.' });
    const line = text.split('\n').indexOf('## 3b · user') + 1;
    assert.deepEqual(loaded.problems[0], {
      file: '<transcript>',
      line,
      why: 'message added by hand (a heading and text, no nf-msg marker): read as a user message; saving the session gives it its marker',
    });
  });

  test('messages added at the end (a tool result with its call id among them) are read', () => {
    const text = `${formatTranscript(ten)}## 11 · user\n\nmore\n\n## 12 · tool · \`call_9\`\n\n42\n`;
    const loaded = parseTranscript(text);
    assert.deepEqual(loaded.messages.slice(10), [
      { role: 'user', content: 'more' },
      { role: 'tool', tool_call_id: 'call_9', content: '42' },
    ]);
    assert.equal(loaded.problems.filter((problem) => /added by hand/.test(problem.why)).length, 2);
  });

  test('a heading that names no role is reported as not kept', () => {
    const loaded = parseTranscript(`${formatTranscript(ten)}## Notes\n\nsomething\n`);
    assert.equal(loaded.messages.length, 10);
    assert.match(loaded.problems[0]!.why, /heading "## Notes" added by hand names no role/);
  });

  test("an edit of a message's readable text is reported, naming the message and its line; the marker wins", () => {
    const text = formatTranscript(ten).replace('\nmessage 6\n', '\nmessage six, corrected\n');
    const loaded = parseTranscript(text);
    assert.deepEqual(loaded.messages, ten);
    const line = text.split('\n').indexOf('## 6 · assistant') + 1;
    assert.deepEqual(loaded.problems, [
      {
        file: '<transcript>',
        line,
        why: 'the readable text of message 6 was edited by hand: its nf-msg marker holds the message and wins, so the edit is not kept when the session is saved',
      },
    ]);
  });

  test('an edit of every message (an editor trimming spaces) is named for ten messages and counted for the rest', () => {
    const spaced = Array.from(
      { length: 30 },
      (_, index) => ({ role: 'user', content: `line ${index}  \nnext` }) as Message,
    );
    const loaded = parseTranscript(formatTranscript(spaced).replaceAll('  \n', '\n'));
    assert.deepEqual(loaded.messages, spaced);
    assert.equal(loaded.problems.length, 11);
    assert.match(loaded.problems[10]!.why, /^the readable text of 20 more message\(s\) was edited too/);
  });

  test('an untouched file has no problems, and a file read through the store (bytes) finds the same', async () => {
    assert.deepEqual(parseTranscript(formatTranscript(ten)).problems, []);
    const text = formatTranscript(ten).replace('## 4 · assistant', '## 3b · user\n\ncafé ☕\n\n## 4 · assistant');
    await writeFile(path('added.md'), text);
    const loaded = await createTranscriptStore(path('added.md')).load();
    assert.deepEqual(loaded.messages[3], { role: 'user', content: 'café ☕' });
    assert.deepEqual(
      loaded.problems.map((problem) => problem.line),
      parseTranscript(text, { file: path('added.md') }).problems.map((problem) => problem.line),
    );
  });

  test("formatTranscript's text declares no readable digest; the store's main file does", async () => {
    assert.doesNotMatch(
      (await import('../../src/session/index.js')).formatTranscript(ten).split('\n')[0]!,
      /readable=/,
    );
    const store = createTranscriptStore(path('store.md'));
    await store.save(ten);
    await store.close();
    assert.match((await readFile(path('store.md'), 'utf8')).split('\n')[0]!, / readable=sha256:[0-9a-f]{64} -->$/);
  });

  test('fix --write keeps a message added by hand (it gets its marker), and check reports it', async () => {
    const text = formatTranscript(ten).replace('## 4 · assistant', '## 3b · user\n\nkept, please\n\n## 4 · assistant');
    await writeFile(path('fix-added.md'), text);
    const checked = captureIo();
    assert.equal(await run(['check', path('fix-added.md')], checked), 1);
    assert.match(checked.out(), /damaged: message added by hand/);
    assert.equal(await run(['fix', '--write', path('fix-added.md')], captureIo()), 0);
    const saved = parseTranscript(await readFile(path('fix-added.md'), 'utf8'));
    assert.deepEqual(saved.problems, []);
    assert.equal(saved.messages.length, 11);
    assert.deepEqual(saved.messages[3], { role: 'user', content: 'kept, please' });
  });

  test('in a segment file of a long session: a message added by hand is read and reported, and the next save keeps it', async () => {
    const file = path('long.md');
    const writer = createTranscriptStore(file, { segmentMessages: 4 });
    await writer.save(ten);
    await writer.close();
    const segment = /file=(\S+) -->/.exec(await readFile(file, 'utf8'))![1]!;
    const segmentPath = path(decodeURIComponent(segment));
    await writeFile(
      segmentPath,
      (await readFile(segmentPath, 'utf8')).replace(
        '## 2 · assistant',
        '## 1b · user\n\nadded in a segment\n\n## 2 · assistant',
      ),
    );
    const store = createTranscriptStore(file, { segmentMessages: 4 });
    try {
      const loaded = await store.load();
      assert.deepEqual(contents(loaded.messages), ['message 1', 'added in a segment', ...contents(ten.slice(1))]);
      assert.ok(
        loaded.problems.some((problem) => problem.file === segmentPath && /message added by hand/.test(problem.why)),
        JSON.stringify(loaded.problems),
      );
      await store.save(loaded.messages);
      assert.deepEqual(await store.load(), { messages: loaded.messages, problems: [] });
    } finally {
      await store.close();
    }
  });

  test('a UTF-8 byte order mark before the header does not switch off the checks: a cut file reports what it lost', async () => {
    const text = formatTranscript(ten);
    const markers = [...text.matchAll(/^<!-- nf-msg .* -->$/gm)];
    const cut = `\uFEFF${text.slice(0, markers[3]!.index + markers[3]![0].length + 1)}`;
    const loaded = parseTranscript(cut);
    assert.equal(loaded.messages.length, 4);
    assert.ok(
      loaded.problems.some((problem) => /declares 10 messages but 4 were read: 6 missing/.test(problem.why)),
      JSON.stringify(loaded.problems),
    );
    await writeFile(path('bom-cut.md'), cut);
    const fromStore = await createTranscriptStore(path('bom-cut.md')).load();
    assert.ok(fromStore.problems.some((problem) => /6 missing/.test(problem.why)));
    const whole = parseTranscript(`\uFEFF${text}`);
    assert.deepEqual(whole, { messages: ten, problems: [] });
  });
});

describe('fix --write on a long (segmented) session', () => {
  test('FILE.bak holds the true original: the segment files it declares are kept by this save and the next ones', async () => {
    const file = path('long-fix.md');
    const messages: Message[] = [];
    for (let index = 0; messages.length < 2100; index += 1) {
      messages.push({ role: 'user', content: `question ${index}` });
      // The first call is never answered: its repair changes the first block (segment) of the session.
      messages.push({
        role: 'assistant',
        content: null,
        tool_calls: [{ id: `call_${index}`, type: 'function', function: { name: 'f', arguments: '{}' } }],
      });
      if (index > 0) messages.push({ role: 'tool', tool_call_id: `call_${index}`, content: 'ok' });
    }
    const writer = createTranscriptStore(file);
    await writer.save(messages);
    await writer.close();
    assert.equal(await run(['fix', '--write', file], captureIo()), 0);
    const backup = await createTranscriptStore(`${file}.bak`).load();
    assert.deepEqual(backup.problems, []);
    assert.deepEqual(backup.messages, messages);
    // A later save of the session (an agent going on) does not take the backup's segments away.
    const store = createTranscriptStore(file);
    try {
      const repaired = (await store.load()).messages;
      await store.save([...repaired, { role: 'user', content: 'one more' }]);
    } finally {
      await store.close();
    }
    assert.deepEqual((await createTranscriptStore(`${file}.bak`).load()).messages, messages);
  });
});
