import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { watch } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Step } from '../../src/emulator/index.js';
import { createEmulator } from '../../src/emulator/index.js';
import { cleanEnv, NODE_ARGS, TSX } from './harness/run-chat-binary.js';

/**
 * SIGKILL while write_file writes 50 MB over a file (or creates it): the file must be whole
 * afterwards, the old content or the new, or absent for a new file; never a prefix. Each run kills
 * at a random moment within the write's measured duration, after its first change on disk. Every run
 * is a process start and a 50 MB write: UNSTUCK_KILL_RUNS sets how many per path (100 for the
 * issue's figure; the default keeps `npm test` short).
 */
const RUNS = Number(process.env.UNSTUCK_KILL_RUNS ?? '6');
const SIZE = 50 * 1024 * 1024;
const PATTERN = 'new content 0123456789\n';
const NEW_DIGEST = createHash('sha256').update(Buffer.alloc(SIZE, PATTERN)).digest('hex');
const OLD = 'the old content, which must survive\n';
const WRITER = fileURLToPath(new URL('./fixtures/write-big-file.ts', import.meta.url));

let base: string;
before(async () => {
  base = await mkdtemp(join(tmpdir(), 'unstuck-kill-write-'));
});
after(async () => {
  await rm(base, { recursive: true, force: true });
});

type Verdict = 'old' | 'new' | 'absent' | 'torn';

async function verdictOf(path: string): Promise<{ verdict: Verdict; size?: number }> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch {
    return { verdict: 'absent' };
  }
  if (bytes.toString('utf8') === OLD) return { verdict: 'old' };
  if (bytes.length === SIZE && createHash('sha256').update(bytes).digest('hex') === NEW_DIGEST)
    return { verdict: 'new' };
  return { verdict: 'torn', size: bytes.length };
}

/** Waits for `marker` on the stream, then resolves with the time it was seen. */
function seen(child: ChildProcess, stream: 'stdout' | 'stderr', marker: string): Promise<number> {
  return new Promise((resolve) => {
    let text = '';
    child[stream]!.on('data', (chunk: Buffer) => {
      if (text.includes(marker)) return;
      text += chunk.toString('utf8');
      if (text.includes(marker)) resolve(performance.now());
    });
  });
}

/**
 * When the file system reports changes of the target (its own name or a temporary file named after
 * it): `first` resolves at the first, the moment the write reaches the disk whatever the tool's
 * strategy; `last()` is the time of the latest so far. Between the two the write is in progress.
 */
function touched(dir: string): { first: Promise<number>; last(): number; close(): void } {
  let resolveFirst!: (time: number) => void;
  const first = new Promise<number>((resolve) => (resolveFirst = resolve));
  let last = 0;
  const watcher = watch(dir, (_event, filename) => {
    if (filename === null || !String(filename).includes('target.txt')) return;
    last = performance.now();
    resolveFirst(last);
  });
  return { first, last: () => last, close: () => watcher.close() };
}

interface Writer {
  /** Starts one write_file of the target in `dir`; `finished` resolves when the call has ended (a kill: never). */
  start(
    dir: string,
  ): Promise<{ child: ChildProcess; finished: Promise<number>; exited: Promise<void>; done?: () => Promise<void> }>;
}

/** Runs the kill series for one way of driving write_file; returns the counts of each outcome. */
async function killSeries(
  name: string,
  writer: Writer,
  report: (line: string) => void,
): Promise<Record<string, number>> {
  // One uninterrupted write first: how long a write takes here, from its first change on disk to its last.
  const calibration = join(base, `${name}-calibration`);
  await mkdir(calibration);
  await writeFile(join(calibration, 'target.txt'), OLD);
  const watching = touched(calibration);
  const probe = await writer.start(calibration);
  await probe.finished;
  const began = await watching.first;
  const window = Math.max(5, watching.last() - began);
  watching.close();
  await probe.exited;
  await probe.done?.();
  assert.equal((await verdictOf(join(calibration, 'target.txt'))).verdict, 'new', 'the uninterrupted write completes');

  const counts: Record<string, number> = {
    old: 0,
    new: 0,
    absent: 0,
    torn: 0,
    leftoverTemporaries: 0,
    windowMs: Math.round(window),
  };
  const torn: string[] = [];
  for (let run = 0; run < RUNS; run += 1) {
    const dir = join(base, `${name}-${run}`);
    await mkdir(dir);
    const existing = run % 2 === 0;
    if (existing) await writeFile(join(dir, 'target.txt'), OLD);
    const watchingRun = touched(dir);
    const attempt = await writer.start(dir);
    await Promise.race([watchingRun.first, attempt.exited]);
    await new Promise((resolve) => setTimeout(resolve, Math.random() * window));
    attempt.child.kill('SIGKILL');
    watchingRun.close();
    await attempt.exited;
    await attempt.done?.();
    const { verdict, size } = await verdictOf(join(dir, 'target.txt'));
    counts[verdict] = (counts[verdict] ?? 0) + 1;
    if (verdict === 'torn') torn.push(`run ${run}: ${size} bytes`);
    if (verdict === 'absent' && existing) torn.push(`run ${run}: the existing file is gone`);
    if (verdict === 'old' && !existing) torn.push(`run ${run}: old content in a new file?`);
    counts.leftoverTemporaries! += (await readdir(dir)).filter((entry) => entry.endsWith('.tmp')).length;
    await rm(dir, { recursive: true, force: true });
  }
  report(`kill during a 50 MB write_file (${name}, ${RUNS} kills): ${JSON.stringify(counts)}`);
  assert.deepEqual(torn, [], `torn or lost files: ${JSON.stringify(counts)}`);
  return counts;
}

describe('SIGKILL during a 50 MB write_file leaves the file whole: old, new, or absent for a new file', () => {
  it(`through the library (createAgent with the built-in tools), ${RUNS} kills`, {
    timeout: 60_000 + RUNS * 30_000,
  }, async (t) => {
    await killSeries(
      'library',
      {
        async start(dir) {
          const child = spawn(process.execPath, ['--import', TSX, WRITER, dir, 'target.txt', String(SIZE), PATTERN], {
            stdio: ['ignore', 'pipe', 'inherit'],
          });
          const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
          return { child, finished: seen(child, 'stdout', 'written\n'), exited };
        },
      },
      (line) => t.diagnostic(line),
    );
  });

  it(`through unstuck chat -p --yes against the emulator, ${RUNS} kills`, {
    timeout: 60_000 + RUNS * 30_000,
  }, async (t) => {
    // Built once: the emulator serves the same 50 MB call to every run, in large SSE chunks.
    const write: Step = {
      toolCalls: [
        {
          name: 'write_file',
          arguments: JSON.stringify({ path: 'target.txt', content: Buffer.alloc(SIZE, PATTERN).toString('utf8') }),
        },
      ],
      stream: { chunkSize: 1024 * 1024 },
    };
    await killSeries(
      'binary',
      {
        async start(dir) {
          const exists = await readFile(join(dir, 'target.txt')).then(
            () => true,
            () => false,
          );
          // The model reads the file (when there is one), then overwrites or creates it.
          const emulator = createEmulator({
            profile: 'deepseek',
            script: [
              ...(exists ? [{ toolCalls: [{ name: 'read_file', arguments: '{"path":"target.txt"}' }] }] : []),
              write,
              { text: 'done' },
            ],
          });
          const server = await emulator.listen();
          const child = spawn(
            process.execPath,
            [...NODE_ARGS, 'chat', '--base-url', server.url, '--profile', 'deepseek', '--yes', '-p', 'write it'],
            { cwd: dir, env: cleanEnv({ OPENAI_API_KEY: 'sk-test' }), stdio: ['ignore', 'ignore', 'pipe'] },
          );
          const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
          return { child, finished: seen(child, 'stderr', '[done] write_file'), exited, done: () => server.close() };
        },
      },
      (line) => t.diagnostic(line),
    );
  });
});
