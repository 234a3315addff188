import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, open, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { SessionStore, TranscriptStoreOptions } from '../../src/session/index.js';
import { createTranscriptStore } from '../../src/session/index.js';
import { asJson, temporaryDirectory, toolLoopSession, withStore } from './helpers.js';

const segmentFile = /^session\.seg-[0-9a-f]{16}\.md$/;

/** A transcript store on `session.md` in a new temporary directory, closed and removed after `body`. */
function withTranscriptStore(
  options: TranscriptStoreOptions,
  body: (context: { store: SessionStore; path: string; directory: { path: string } }) => Promise<void>,
): Promise<void> {
  return withStore('session.md', (path) => createTranscriptStore(path, options), body);
}

async function listing(directory: string): Promise<string[]> {
  return (await readdir(directory)).sort();
}

/** Each segment file and its inode and modification time: a file written again (temp + rename) gets another inode. */
async function segmentIdentities(directory: string): Promise<Map<string, string>> {
  const identities = new Map<string, string>();
  for (const name of (await listing(directory)).filter((candidate) => segmentFile.test(candidate))) {
    const info = await stat(join(directory, name), { bigint: true });
    identities.set(name, `${info.ino}:${info.mtimeNs}`);
  }
  return identities;
}

/**
 * Sets a file's modification time back to the nanosecond (`utimes` takes seconds as a double,
 * which cannot hold them): with touch where there is one. False if only to the millisecond.
 */
async function setModifiedTime(file: string, mtimeNs: bigint): Promise<boolean> {
  const seconds = mtimeNs / 1_000_000_000n;
  const nanoseconds = String(mtimeNs % 1_000_000_000n).padStart(9, '0');
  try {
    execFileSync('touch', ['-m', '-d', `@${seconds}.${nanoseconds}`, file], { stdio: 'ignore' });
    return true;
  } catch {
    await utimes(file, new Date(), new Date(Number(mtimeNs / 1_000_000n)));
    return false;
  }
}

/** The segment files the main file declares, in order. */
async function declaredSegments(path: string): Promise<string[]> {
  return [...(await readFile(path, 'utf8')).matchAll(/file=(session\.seg-[0-9a-f]{16}\.md)/g)].map(
    (match) => match[1]!,
  );
}

describe('createTranscriptStore: segments', () => {
  it('splits a long session into digest-named segments the main file declares, and loads it whole', async () => {
    await withTranscriptStore({ segmentMessages: 10 }, async ({ store, path, directory }) => {
      const messages = toolLoopSession(10); // 41 messages: 4 segments of 10, 1 in the main file
      await store.save(messages);
      const names = await listing(directory.path);
      assert.equal(names.filter((name) => segmentFile.test(name)).length, 4);
      const main = await readFile(path, 'utf8');
      assert.equal(main.split('\n').filter((line) => line.startsWith('<!-- unstuck-segment ')).length, 4);
      assert.match(main, /^- \[messages 31–40\]\(session\.seg-[0-9a-f]{16}\.md\)$/m);
      assert.deepEqual(await store.load(), { messages: asJson(messages), problems: [] });
    });
  });

  it('rewrites only what changed: an append keeps the earlier segment files', async () => {
    await withTranscriptStore({ segmentMessages: 10 }, async ({ store, directory }) => {
      const messages = toolLoopSession(10);
      await store.save(messages);
      const before = (await listing(directory.path)).filter((name) => segmentFile.test(name));
      await store.save([...messages, { role: 'user', content: 'one more' }]);
      const after = (await listing(directory.path)).filter((name) => segmentFile.test(name));
      assert.deepEqual(after, before);
    });
  });

  it('regression (NexForgeCLI stale segments): 130 messages then 3 loads 3, and old segment files are gone', async () => {
    await withTranscriptStore({ segmentMessages: 50 }, async ({ store, directory }) => {
      const long = toolLoopSession(32).concat({ role: 'user', content: 'x' }); // 130 messages
      assert.equal(long.length, 130);
      await store.save(long);
      const oldSegments = (await listing(directory.path)).filter((name) => segmentFile.test(name));
      assert.equal(oldSegments.length, 2);
      const short = long.slice(0, 3);
      await store.save(short);
      assert.deepEqual(await store.load(), { messages: asJson(short), problems: [] });
      assert.deepEqual(await listing(directory.path), ['session.md', 'session.md.lock']);
    });
  });

  it('never reads a segment file the main file does not declare (left over by a crash before cleanup)', async () => {
    await withTranscriptStore({ segmentMessages: 10 }, async ({ store, path, directory }) => {
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
    });
  });

  it('lists a missing segment and a segment whose digest does not match, and keeps every intact message', async () => {
    await withTranscriptStore({ segmentMessages: 10 }, async ({ store, path, directory }) => {
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
      assert.ok(
        loaded.problems.some(
          (problem) =>
            problem.file === path && /cannot be read/.test(problem.why) && problem.why.includes(declared[1]!),
        ),
      );
      assert.ok(loaded.problems.some((problem) => problem.file === third && /digest/.test(problem.why)));
      assert.ok(loaded.problems.some((problem) => /declares 41 messages but 31/.test(problem.why)));
    });
  });

  it('checks the markers of a segment whose file digest does not match: a swapped marker is listed, not read as saved', async () => {
    await withTranscriptStore({ segmentMessages: 10 }, async ({ store, path, directory }) => {
      const messages = toolLoopSession(10);
      await store.save(messages);
      const second = join(directory.path, (await declaredSegments(path))[1]!);
      // A well-formed marker for another message in place of message 12's: only the markers' digest can tell.
      const forged = Buffer.from(JSON.stringify({ role: 'user', content: 'forged' })).toString('base64');
      const text = await readFile(second, 'utf8');
      const lines = text.split('\n');
      const at = lines.flatMap((line, index) => (line.startsWith('<!-- nf-msg ') ? [index] : []))[1]!;
      lines[at] = `<!-- nf-msg ${forged} -->`;
      await writeFile(second, lines.join('\n'));
      const loaded = await createTranscriptStore(path).load();
      assert.ok(
        loaded.problems.some(
          (problem) =>
            problem.file === second && /digest does not match the one the main file declares/.test(problem.why),
        ),
        JSON.stringify(loaded.problems),
      );
      assert.ok(
        loaded.problems.some(
          (problem) =>
            problem.file === second && /marker lines do not match the digest in the header/.test(problem.why),
        ),
        JSON.stringify(loaded.problems),
      );
    });
  });

  it('loads segments of very different sizes exactly (each read into the buffer the last one left, or a larger one)', async () => {
    await withTranscriptStore({ segmentMessages: 3 }, async ({ store, path }) => {
      const sizes = [10, 200_000, 10, 10, 1_000_000, 50, 10];
      const messages = asJson(
        sizes.flatMap((size, index) => [
          { role: 'user', content: `${index}: ${'会'.repeat(size)}` },
          { role: 'assistant', content: `ok ${index}` },
          { role: 'user', content: 'next' },
        ]),
      );
      await store.save(messages);
      assert.deepEqual(await createTranscriptStore(path).load(), { messages, problems: [] });
    });
  });

  it('removes temporary files a crashed writer left behind', async () => {
    await withTranscriptStore({}, async ({ store, directory }) => {
      await writeFile(join(directory.path, '.session.md.tmp-999999-0123abcd'), 'half a save');
      await store.save([{ role: 'user', content: 'hi' }]);
      assert.deepEqual(await listing(directory.path), ['session.md', 'session.md.lock']);
    });
  });
});

describe('createTranscriptStore: saves after a step (only what changed is written)', () => {
  it('leaves the unchanged segment files alone, adds the new one, and loads each save exactly', async () => {
    await withTranscriptStore({ segmentMessages: 10 }, async ({ store, path, directory }) => {
      const messages = toolLoopSession(10); // 41: 4 segments
      await store.save(messages);
      const before = await segmentIdentities(directory.path);
      // One step: the same objects and a few new messages, as the agent saves.
      const step = [...messages, { role: 'assistant', content: 'step 1' }, { role: 'user', content: 'more' }];
      await store.save(step);
      assert.deepEqual(await segmentIdentities(directory.path), before);
      assert.deepEqual(await createTranscriptStore(path).load(), { messages: asJson(step), problems: [] });
      // Enough steps to fill a fifth block: four files stay as they are, one is added.
      const longer = [...step, ...toolLoopSession(2, 2)];
      await store.save(longer);
      const after = await segmentIdentities(directory.path);
      assert.equal(after.size, 5);
      for (const [name, identity] of before) assert.equal(after.get(name), identity, name);
      assert.deepEqual(await createTranscriptStore(path).load(), { messages: asJson(longer), problems: [] });
    });
  });

  it('writes a block whose messages were changed in place since the last save', async () => {
    await withTranscriptStore({ segmentMessages: 10 }, async ({ store, path }) => {
      const messages = toolLoopSession(10);
      await store.save(messages);
      messages[3]!.content = 'changed in place';
      (messages[14]!.tool_calls![0]!.function as { arguments: string }).arguments = '{"path":"other.ts"}';
      await store.save(messages);
      assert.deepEqual(await createTranscriptStore(path).load(), { messages: asJson(messages), problems: [] });
    });
  });

  it('does not trust a segment file changed behind its back, even with its size and times put back', async () => {
    await withTranscriptStore({ segmentMessages: 10 }, async ({ store, path, directory }) => {
      const messages = toolLoopSession(10);
      await store.save(messages);
      const segment = join(directory.path, (await declaredSegments(path))[1]!);
      const original = await readFile(segment);
      const times = await stat(segment, { bigint: true });
      // The same inode, the same size, the modification time set back: only the change time moves.
      const handle = await open(segment, 'r+');
      await handle.write(original.toString('utf8').replace('# Session transcript', '# Session transcripX'), 0, 'utf8');
      await handle.close();
      if (await setModifiedTime(segment, times.mtimeNs))
        assert.equal((await stat(segment, { bigint: true })).mtimeNs, times.mtimeNs);
      assert.ok((await createTranscriptStore(path).load()).problems.length > 0, 'the change is there');
      await store.save(messages);
      assert.ok((await readFile(segment)).equals(original));
      assert.deepEqual(await createTranscriptStore(path).load(), { messages: asJson(messages), problems: [] });
      // And a segment file removed behind its back is written again.
      await rm(segment);
      await store.save(messages);
      assert.ok((await readFile(segment)).equals(original));
    });
  });

  it('a new store reuses the intact segment files of an earlier save and rewrites a damaged one', async () => {
    const directory = await temporaryDirectory();
    const path = join(directory.path, 'session.md');
    const messages = toolLoopSession(10);
    const first = createTranscriptStore(path, { segmentMessages: 10 });
    await first.save(messages);
    await first.close();
    const store = createTranscriptStore(path, { segmentMessages: 10 });
    try {
      const declared = await declaredSegments(path);
      const damaged = join(directory.path, declared[2]!);
      const original = await readFile(damaged);
      await writeFile(damaged, original.subarray(0, original.length - 100));
      const before = await segmentIdentities(directory.path);
      await store.save(messages);
      const after = await segmentIdentities(directory.path);
      for (const name of [declared[0]!, declared[1]!, declared[3]!])
        assert.equal(after.get(name), before.get(name), name);
      assert.notEqual(after.get(declared[2]!), before.get(declared[2]!));
      assert.ok((await readFile(damaged)).equals(original));
      assert.deepEqual(await store.load(), { messages: asJson(messages), problems: [] });
    } finally {
      await store.close();
      await directory.dispose();
    }
  });

  it('after a load, the first save keeps the intact segment files it read, and rewrites a damaged one and a changed block', async () => {
    const directory = await temporaryDirectory();
    const path = join(directory.path, 'session.md');
    const first = createTranscriptStore(path, { segmentMessages: 10 });
    await first.save(toolLoopSession(10));
    await first.close();
    const declared = await declaredSegments(path);
    const damaged = join(directory.path, declared[3]!);
    await writeFile(damaged, (await readFile(damaged, 'utf8')).replace('# Session transcript', '# Session transcripX'));
    const store = createTranscriptStore(path, { segmentMessages: 10 });
    try {
      const loaded = await store.load();
      // The damaged segment's digest, and what changed in it: its title, outside any message.
      assert.deepEqual(
        loaded.problems.map((problem) => problem.why.split(' (')[0]!.split(':')[0]),
        [
          'digest does not match the one the main file declares',
          'the readable text was edited by hand outside any message',
        ],
      );
      const before = await segmentIdentities(directory.path);
      const history = [...loaded.messages, { role: 'user', content: 'next turn' }];
      history[12]!.content = 'changed in place after the load';
      await store.save(history);
      const after = await segmentIdentities(directory.path);
      assert.equal(after.get(declared[0]!), before.get(declared[0]!));
      assert.equal(after.get(declared[2]!), before.get(declared[2]!));
      assert.ok(!after.has(declared[1]!), 'block 2 changed: a new file, the old one removed');
      assert.notEqual(after.get(declared[3]!), before.get(declared[3]!));
      assert.deepEqual(await createTranscriptStore(path).load(), { messages: asJson(history), problems: [] });
    } finally {
      await store.close();
      await directory.dispose();
    }
  });
});
