import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createTranscriptStore } from '../../src/session/index.js';
import { asJson, temporaryDirectory, toolLoopSession } from './helpers.js';

const segmentFile = /^session\.seg-[0-9a-f]{16}\.md$/;

async function listing(directory: string): Promise<string[]> {
  return (await readdir(directory)).sort();
}

describe('createTranscriptStore: segments', () => {
  it('splits a long session into digest-named segments the main file declares, and loads it whole', async () => {
    const directory = await temporaryDirectory();
    const path = join(directory.path, 'session.md');
    const store = createTranscriptStore(path, { segmentMessages: 10 });
    try {
      const messages = toolLoopSession(10); // 41 messages: 4 segments of 10, 1 in the main file
      await store.save(messages);
      const names = await listing(directory.path);
      assert.equal(names.filter((name) => segmentFile.test(name)).length, 4);
      const main = await readFile(path, 'utf8');
      assert.equal(main.split('\n').filter((line) => line.startsWith('<!-- unstuck-segment ')).length, 4);
      assert.match(main, /^- \[messages 31–40\]\(session\.seg-[0-9a-f]{16}\.md\)$/m);
      assert.deepEqual(await store.load(), { messages: asJson(messages), problems: [] });
    } finally {
      await store.close();
      await directory.dispose();
    }
  });

  it('rewrites only what changed: an append keeps the earlier segment files', async () => {
    const directory = await temporaryDirectory();
    const path = join(directory.path, 'session.md');
    const store = createTranscriptStore(path, { segmentMessages: 10 });
    try {
      const messages = toolLoopSession(10);
      await store.save(messages);
      const before = (await listing(directory.path)).filter((name) => segmentFile.test(name));
      await store.save([...messages, { role: 'user', content: 'one more' }]);
      const after = (await listing(directory.path)).filter((name) => segmentFile.test(name));
      assert.deepEqual(after, before);
    } finally {
      await store.close();
      await directory.dispose();
    }
  });

  it('regression (NexForgeCLI stale segments): 130 messages then 3 loads 3, and old segment files are gone', async () => {
    const directory = await temporaryDirectory();
    const path = join(directory.path, 'session.md');
    const store = createTranscriptStore(path, { segmentMessages: 50 });
    try {
      const long = toolLoopSession(32).concat({ role: 'user', content: 'x' }); // 130 messages
      assert.equal(long.length, 130);
      await store.save(long);
      const oldSegments = (await listing(directory.path)).filter((name) => segmentFile.test(name));
      assert.equal(oldSegments.length, 2);
      const short = long.slice(0, 3);
      await store.save(short);
      assert.deepEqual(await store.load(), { messages: asJson(short), problems: [] });
      assert.deepEqual(await listing(directory.path), ['session.md', 'session.md.lock']);
    } finally {
      await store.close();
      await directory.dispose();
    }
  });

  it('never reads a segment file the main file does not declare (left over by a crash before cleanup)', async () => {
    const directory = await temporaryDirectory();
    const path = join(directory.path, 'session.md');
    const store = createTranscriptStore(path, { segmentMessages: 10 });
    try {
      await store.save(toolLoopSession(10));
      const oldNames = (await listing(directory.path)).filter((name) => segmentFile.test(name));
      const oldSegment = await readFile(join(directory.path, oldNames[0]!));
      const short = toolLoopSession(1);
      await store.save(short);
      // Put an old segment back, and a directory where a reader would fail if it looked.
      await writeFile(join(directory.path, oldNames[0]!), oldSegment);
      await mkdir(join(directory.path, `session.seg-${'f'.repeat(16)}.md`));
      assert.deepEqual(await createTranscriptStore(path).load(), { messages: asJson(short), problems: [] });
      // The next save removes the leftover file.
      await store.save(short);
      assert.ok(!(await listing(directory.path)).includes(oldNames[0]!));
    } finally {
      await store.close();
      await directory.dispose();
    }
  });

  it('lists a missing segment and a segment whose digest does not match, and keeps every intact message', async () => {
    const directory = await temporaryDirectory();
    const path = join(directory.path, 'session.md');
    const store = createTranscriptStore(path, { segmentMessages: 10 });
    try {
      const messages = toolLoopSession(10);
      await store.save(messages);
      await store.close();
      const main = await readFile(path, 'utf8');
      const declared = [...main.matchAll(/file=(session\.seg-[0-9a-f]{16}\.md)/g)].map((match) => match[1]!);
      await rm(join(directory.path, declared[1]!));
      const third = join(directory.path, declared[2]!);
      await writeFile(third, (await readFile(third, 'utf8')).replace('## 22 · user', '## 22 · edited'));
      const loaded = await createTranscriptStore(path).load();
      // Segment 2 (messages 11-20) is gone; segment 3 changed in its readable part only, so its messages are intact.
      assert.deepEqual(loaded.messages, asJson([...messages.slice(0, 10), ...messages.slice(20)]));
      assert.ok(loaded.problems.some((problem) => problem.file === path && /cannot be read/.test(problem.why) && problem.why.includes(declared[1]!)));
      assert.ok(loaded.problems.some((problem) => problem.file === third && /digest/.test(problem.why)));
      assert.ok(loaded.problems.some((problem) => /declares 41 messages but 31/.test(problem.why)));
    } finally {
      await directory.dispose();
    }
  });

  it('removes temporary files a crashed writer left behind', async () => {
    const directory = await temporaryDirectory();
    const path = join(directory.path, 'session.md');
    const store = createTranscriptStore(path);
    try {
      await writeFile(join(directory.path, '.session.md.tmp-999999-0123abcd'), 'half a save');
      await store.save([{ role: 'user', content: 'hi' }]);
      assert.deepEqual(await listing(directory.path), ['session.md', 'session.md.lock']);
    } finally {
      await store.close();
      await directory.dispose();
    }
  });
});
