/**
 * Session stores: save and load of a session the size of NexForgeCLI's session-122357 (3,785
 * messages, about 0.9 M characters of content, tool loops with reasoning_content) and of one ten
 * times larger, as ratios to JSON.stringify / JSON.parse of the same messages in the same run.
 * Store rows also give the ratio to a plain JSON file through the same disk steps (write, fsync,
 * rename, directory fsync; read). A Markdown save is measured cold (a new store into an empty
 * directory), with the same messages again, after one agent step (the same objects plus STEP
 * new messages), and as the first save of a new store after its load (an agent that starts
 * again); a journal's step is an append. Peak memory is measured in a fresh child
 * process per operation (maxRSS after, minus RSS before).
 *
 *   node --import tsx bench/session.bench.ts
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Message } from '../src/core/messages.js';
import { writeFileAtomic } from '../src/session/atomic-write.js';
import type { SessionStore } from '../src/session/index.js';
import {
  createJournalStore,
  createTranscriptStore,
  formatJournal,
  formatTranscript,
  parseJournal,
  parseTranscript,
} from '../src/session/index.js';
import { seedLikeSession } from './session-fixtures.js';

/** Messages one agent step adds (an assistant's tool call, its result, the assistant's text). */
const STEP = 3;

function contentCharacters(messages: readonly Message[]): number {
  let total = 0;
  for (const message of messages) if (typeof message.content === 'string') total += message.content.length;
  return total;
}

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** Something to time: `prepare` and `cleanup` run untimed around each timed `run`. */
interface Operation {
  prepare?: () => Promise<unknown>;
  run: () => unknown;
  cleanup?: () => Promise<unknown>;
}

/**
 * Fastest wall time of each operation over `runs` rounds after one warm-up, the operations taking
 * turns within each round. The fastest run is the one least disturbed by other processes on a
 * shared machine, and taking turns puts a candidate and its baseline under the same load: a
 * baseline measured seconds apart from its candidate moved by up to 70% on this machine.
 */
async function timeTogether(runs: number, operations: readonly Operation[]): Promise<number[]> {
  for (const operation of operations) {
    await operation.prepare?.();
    await operation.run();
    await operation.cleanup?.();
  }
  const best = operations.map(() => Number.POSITIVE_INFINITY);
  for (let run = 0; run < runs; run += 1) {
    for (const [index, operation] of operations.entries()) {
      await operation.prepare?.();
      collectGarbage(); // each run starts from a collected heap, so one run's garbage is not billed to the next
      const start = performance.now();
      await operation.run();
      best[index] = Math.min(best[index]!, performance.now() - start);
      await operation.cleanup?.();
    }
  }
  return best;
}

function filesSize(directory: string, prefix: string): number {
  let total = 0;
  for (const name of readdirSync(directory))
    if (name.startsWith(prefix) && !name.endsWith('.lock')) total += statSync(join(directory, name)).size;
  return total;
}

/** Peak memory of one operation, in a fresh process: maxRSS after minus RSS before. */
function peakMemory(operation: string, scale: number, path: string): { peak: number; kept: number } {
  const result = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--expose-gc', fileURLToPath(import.meta.url), 'peak', operation, String(scale), path],
    { encoding: 'utf8' },
  );
  if (result.status !== 0) throw new Error(`peak ${operation}: ${result.stderr}`);
  const [peak, kept] = result.stdout.trim().split(' ').map(Number);
  return { peak: peak!, kept: kept! };
}

async function childPeak(operation: string, scale: number, path: string): Promise<void> {
  const { readFile, writeFile } = await import('node:fs/promises');
  const needsMessages = operation.startsWith('save') || operation === 'stringify';
  const messages = needsMessages ? seedLikeSession(scale) : [];
  (globalThis as { gc?: () => void }).gc?.();
  const before = process.memoryUsage().rss;
  const heapBefore = process.memoryUsage().heapUsed;
  let keep: unknown;
  switch (operation) {
    case 'stringify':
      keep = JSON.stringify(messages);
      await writeFile(path, keep as string);
      break;
    case 'parse':
      keep = JSON.parse(await readFile(path, 'utf8'));
      break;
    case 'save-md': {
      const store = createTranscriptStore(path);
      await store.save(messages);
      await store.close();
      break;
    }
    case 'load-md':
      keep = await createTranscriptStore(path).load();
      break;
    case 'save-jsonl': {
      const store = createJournalStore(path);
      await store.save(messages);
      await store.close();
      break;
    }
    case 'load-jsonl':
      keep = await createJournalStore(path).load();
      break;
    default:
      throw new Error(operation);
  }
  const peak = process.resourceUsage().maxRSS * 1024;
  // What the operation leaves on the heap (a load's messages): the floor under any load's peak.
  (globalThis as { gc?: () => void }).gc?.();
  const kept = process.memoryUsage().heapUsed - heapBefore;
  process.stdout.write(`${peak - before} ${kept}\n`);
  void keep;
}

interface Row {
  size: string;
  format: string;
  operation: string;
  ms: number;
  baselineMs: number;
  ratio: number;
  target: number;
  fileBytes: number;
  peakBytes?: number;
  keptBytes?: number;
  fileBaselineMs?: number;
}

async function main(): Promise<void> {
  const directory = mkdtempSync(join(tmpdir(), 'unstuck-bench-session-'));
  const rows: Row[] = [];
  const sizes: string[] = [];
  try {
    for (const scale of [1, 10]) {
      const runs = scale === 1 ? 15 : 5;
      const messages = seedLikeSession(scale);
      const label = `${messages.length} messages, ${(contentCharacters(messages) / 1e6).toFixed(2)} M chars`;
      sizes.push(label);
      const json = JSON.stringify(messages);
      const mdText = formatTranscript(messages);
      const jsonlText = formatJournal(messages);
      const mdPath = join(directory, `s${scale}.md`);
      const jsonlPath = join(directory, `s${scale}.jsonl`);
      const jsonFile = join(directory, `s${scale}.json`);
      // One step of the agent: the same message objects and the last STEP messages new.
      const before = messages.slice(0, -STEP);
      const step = messages.slice(-STEP);
      const stringify: Operation = { run: () => JSON.stringify(messages) };
      const parse: Operation = { run: () => JSON.parse(json) };
      const jsonSave: Operation = { run: () => writeFileAtomic(jsonFile, Buffer.from(JSON.stringify(messages))) };
      const jsonLoad: Operation = { run: async () => JSON.parse(await readFile(jsonFile, 'utf8')) };
      await jsonSave.run();
      const transcript = createTranscriptStore(mdPath);
      const journal = createJournalStore(jsonlPath);
      let cold: { directory: string; store: SessionStore } | undefined;
      const coldSave: Operation = {
        prepare: async () => {
          const place = mkdtempSync(join(directory, 'cold-'));
          cold = { directory: place, store: createTranscriptStore(join(place, 's.md')) };
        },
        run: () => cold!.store.save(messages),
        cleanup: async () => {
          await cold!.store.close();
          rmSync(cold!.directory, { recursive: true, force: true });
        },
      };
      // An agent that starts again: a new store loads the session, then saves it with one step more.
      const restartPath = join(directory, `r${scale}.md`);
      let restart: { store: SessionStore; loaded: Message[] } | undefined;
      const saveAfterLoad: Operation = {
        prepare: async () => {
          const writer = createTranscriptStore(restartPath);
          await writer.save(before);
          await writer.close();
          const store = createTranscriptStore(restartPath);
          restart = { store, loaded: (await store.load()).messages };
        },
        run: () => restart!.store.save(restart!.loaded.concat(step)),
        cleanup: () => restart!.store.close(),
      };
      // [format, operation, candidate, baseline, target, disk baseline (store rows)]
      const plan: [string, string, Operation, Operation, number, Operation?][] = [
        ['JSON file', 'stringify + atomic write (context)', jsonSave, stringify, 0],
        ['JSON file', 'readFile + JSON.parse (context)', jsonLoad, parse, 0],
        ['Markdown', 'format (codec)', { run: () => formatTranscript(messages) }, stringify, 3],
        ['Markdown', 'parse (codec)', { run: () => parseTranscript(mdText) }, parse, 3],
        ['Markdown', 'store save, cold (new store, empty directory)', coldSave, stringify, 3, jsonSave],
        [
          'Markdown',
          'store save, same messages again (fsync, segments)',
          { run: () => transcript.save(messages) },
          stringify,
          3,
          jsonSave,
        ],
        [
          'Markdown',
          `store save after one step (+${STEP} messages)`,
          { prepare: () => transcript.save(before), run: () => transcript.save(messages) },
          stringify,
          3,
          jsonSave,
        ],
        ['Markdown', `store save after a load (new store, +${STEP} messages)`, saveAfterLoad, stringify, 3, jsonSave],
        ['Markdown', 'store load (read file)', { run: () => transcript.load() }, parse, 3, jsonLoad],
        ['JSONL', 'format (codec)', { run: () => formatJournal(messages) }, stringify, 1.5],
        ['JSONL', 'parse (codec)', { run: () => parseJournal(jsonlText) }, parse, 1.5],
        ['JSONL', 'store save (fsync)', { run: () => journal.save(messages) }, stringify, 1.5, jsonSave],
        [
          'JSONL',
          `store append of one step (+${STEP} messages, fsync)`,
          { prepare: () => journal.save(before), run: () => journal.append!(step) },
          stringify,
          1.5,
          jsonSave,
        ],
        ['JSONL', 'store load (read file)', { run: () => journal.load() }, parse, 1.5, jsonLoad],
      ];
      const measured: [string, string, number, number, number, number | undefined][] = [];
      for (const [format, operation, candidate, baseline, target, disk] of plan) {
        const [ms, baselineMs, diskMs] = await timeTogether(
          runs,
          disk === undefined ? [candidate, baseline] : [candidate, baseline, disk],
        );
        measured.push([format, operation, ms!, baselineMs!, target, diskMs]);
      }
      await transcript.save(messages);
      await journal.save(messages);
      await transcript.close();
      await journal.close();
      const mdBytes = filesSize(directory, `s${scale}.`) - statSync(jsonlPath).size - statSync(jsonFile).size;
      const jsonlBytes = statSync(jsonlPath).size;
      for (const [format, operation, ms, baselineMs, target, fileBaselineMs] of measured) {
        const row: Row = {
          size: `x${scale}`,
          format,
          operation,
          ms,
          baselineMs,
          ratio: ms / baselineMs,
          target,
          fileBytes: format === 'Markdown' ? mdBytes : jsonlBytes,
        };
        if (fileBaselineMs !== undefined) row.fileBaselineMs = fileBaselineMs;
        rows.push(row);
      }
      // Peak memory, each in a fresh process.
      const jsonPath = join(directory, `p${scale}.json`);
      const peaks: [string, string, string, number][] = [
        ['JSON', 'JSON.stringify + write', 'stringify', Buffer.byteLength(json)],
        ['JSON', 'read + JSON.parse', 'parse', Buffer.byteLength(json)],
      ];
      for (const [format, operation, name] of peaks) {
        const { peak, kept } = peakMemory(name, scale, jsonPath);
        rows.push({
          size: `x${scale}`,
          format,
          operation: `${operation} (peak)`,
          ms: 0,
          baselineMs: 0,
          ratio: 0,
          target: 0,
          fileBytes: Buffer.byteLength(json),
          peakBytes: peak,
          keptBytes: kept,
        });
      }
      for (const [format, operation, path, bytes] of [
        ['Markdown', 'save-md', join(directory, `m${scale}.md`), mdBytes],
        ['Markdown', 'load-md', join(directory, `m${scale}.md`), mdBytes],
        ['JSONL', 'save-jsonl', join(directory, `m${scale}.jsonl`), jsonlBytes],
        ['JSONL', 'load-jsonl', join(directory, `m${scale}.jsonl`), jsonlBytes],
      ] as const) {
        const { peak, kept } = peakMemory(operation, scale, path);
        rows.push({
          size: `x${scale}`,
          format,
          operation: `${operation} (peak)`,
          ms: 0,
          baselineMs: 0,
          ratio: 0,
          target: 3,
          fileBytes: bytes,
          peakBytes: peak,
          keptBytes: kept,
        });
      }
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
  report(rows, sizes);
}

function report(rows: Row[], sizes: string[]): void {
  const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
  const lines = [
    `machine: ${cpus().length} cores, ${cpus()[0]?.model ?? 'unknown cpu'}, node ${process.version}; load average at the end ${loadavg()
      .map((value) => value.toFixed(1))
      .join(' ')}`,
    'times: fastest of 15 runs (x1) or 5 runs (x10) after a warm-up, each from a collected heap, each row taking turns with its baselines; ratios are to JSON.stringify / JSON.parse of the same messages in the same rounds',
    `sizes: x1 = ${sizes[0]}; x10 = ${sizes[1]}`,
    '',
    '| size | format | operation | ms | JSON baseline ms | ratio | target | ok | vs JSON file (same disk steps) |',
    '|---|---|---|---:|---:|---:|---:|---|---:|',
  ];
  for (const row of rows.filter((candidate) => candidate.peakBytes === undefined)) {
    const target = row.target === 0 ? '' : `<= ${row.target}x`;
    const ok = row.target === 0 ? '' : row.ratio <= row.target ? 'yes' : 'NO';
    const vsFile = row.fileBaselineMs === undefined ? '' : `${(row.ms / row.fileBaselineMs).toFixed(2)}x`;
    lines.push(
      `| ${row.size} | ${row.format} | ${row.operation} | ${row.ms.toFixed(1)} | ${row.baselineMs.toFixed(1)} | ${row.ratio.toFixed(2)}x | ${target} | ${ok} | ${vsFile} |`,
    );
  }
  lines.push(
    '',
    '| size | format | operation | file size | peak RSS growth | peak / file | target | ok | heap the result keeps (after GC) / file |',
    '|---|---|---|---:|---:|---:|---:|---|---:|',
  );
  for (const row of rows.filter((candidate) => candidate.peakBytes !== undefined)) {
    const ratio = row.peakBytes! / row.fileBytes;
    const kept =
      row.keptBytes === undefined || /save|stringify/.test(row.operation)
        ? ''
        : `${mb(row.keptBytes)} = ${(row.keptBytes / row.fileBytes).toFixed(2)}x`;
    lines.push(
      `| ${row.size} | ${row.format} | ${row.operation} | ${mb(row.fileBytes)} | ${mb(row.peakBytes!)} | ${ratio.toFixed(2)}x | ${row.target === 0 ? '(baseline)' : `<= ${row.target}x`} | ${row.target === 0 ? '' : ratio <= row.target ? 'yes' : 'NO'} | ${kept} |`,
    );
  }
  // Linearity: time per message at x10 against x1.
  lines.push('', '| format | operation | x10 ms / x1 ms (10 = linear) |', '|---|---|---:|');
  for (const row of rows.filter(
    (candidate) => candidate.size === 'x1' && candidate.peakBytes === undefined && candidate.target !== 0,
  )) {
    const large = rows.find(
      (candidate) =>
        candidate.size === 'x10' && candidate.format === row.format && candidate.operation === row.operation,
    );
    if (large !== undefined) lines.push(`| ${row.format} | ${row.operation} | ${(large.ms / row.ms).toFixed(1)} |`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

if (process.argv[2] === 'peak') await childPeak(process.argv[3]!, Number(process.argv[4]), process.argv[5]!);
else await main();
