/**
 * Database session stores on a session the size of NexForgeCLI's session-122357 (3,785 messages),
 * against the durable JSON file the session bench uses as its baseline (JSON.stringify, write,
 * fsync, rename, directory fsync; readFile + JSON.parse), all in one run and taking turns round
 * by round:
 *
 * - appending one agent step (3 messages) to the session: p50 targets 2 ms (SQLite), 5 ms (PostgreSQL);
 * - loading it: within 2x (SQLite) and 4x (PostgreSQL) of reading and parsing the JSON file;
 * - appends per second from 8 concurrent writers (processes), each on its own session.
 *
 * PostgreSQL is a server of its own started for the run (test/support/postgres-server.ts), with
 * the defaults that make a commit durable (fsync on, synchronous_commit on), on loopback.
 *
 *   flock /tmp/unstuck-bench.lock node --expose-gc --import tsx bench/db.bench.ts
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { writeFileAtomic } from '../src/session/atomic-write.js';
import type { SessionStore } from '../src/session/index.js';
import { createPostgresStore, createSqliteStore } from '../src/session/index.js';
import { startPostgres } from '../test/support/postgres-server.js';
import { seedLikeSession } from './session-fixtures.js';

const STEP = 3;
const ROUNDS = Number(process.env['UNSTUCK_DB_BENCH_ROUNDS'] ?? 61);
const WRITERS = 8;
const THROUGHPUT_MS = 4000;

interface Operation {
  prepare?: () => Promise<unknown>;
  run: () => Promise<unknown>;
}

/** This process's CPU time (user + system) of each run, sorted, per operation: what the machine's load does not stretch. */
const cpuSamples = new Map<Operation, number[]>();

/** Every operation once per round, in turn, after two warm-up rounds: the wall times of each, sorted. */
async function timeInTurns(rounds: number, operations: readonly Operation[]): Promise<number[][]> {
  const samples = operations.map(() => [] as number[]);
  for (const operation of operations) cpuSamples.set(operation, []);
  for (let round = -2; round < rounds; round += 1) {
    for (const [index, operation] of operations.entries()) {
      await operation.prepare?.();
      const cpu = process.cpuUsage();
      const start = performance.now();
      await operation.run();
      const wall = performance.now() - start;
      const used = process.cpuUsage(cpu);
      if (round >= 0) {
        samples[index]!.push(wall);
        cpuSamples.get(operation)!.push((used.user + used.system) / 1000);
      }
    }
  }
  for (const list of cpuSamples.values()) list.sort((a, b) => a - b);
  return samples.map((list) => list.sort((a, b) => a - b));
}

const quantile = (sorted: readonly number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

async function throughput(kind: 'sqlite' | 'postgres' | 'json', target: string): Promise<number> {
  const child = fileURLToPath(new URL('./db-writer-child.ts', import.meta.url));
  const writers = Array.from({ length: WRITERS }, (_unused, index) =>
    spawn(process.execPath, ['--import', 'tsx', child, kind, target, `writer-${index}`, String(THROUGHPUT_MS)], {
      stdio: ['pipe', 'pipe', 'inherit'],
    }),
  );
  const outputs = writers.map((writer) => {
    let output = '';
    writer.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    return {
      ready: new Promise<void>((resolve) => writer.stdout.on('data', () => output.includes('ready\n') && resolve())),
      done: new Promise<string>((resolve) => writer.on('close', () => resolve(output))),
    };
  });
  await Promise.all(outputs.map((output) => output.ready));
  for (const writer of writers) writer.stdin.end('go\n');
  const counts = (await Promise.all(outputs.map((output) => output.done))).map((output) =>
    Number(
      output
        .split('\n')
        .filter((line) => line !== '')
        .at(-1),
    ),
  );
  if (counts.some((count) => !Number.isFinite(count))) throw new Error(`a ${kind} writer failed`);
  return counts.reduce((sum, count) => sum + count, 0) / (THROUGHPUT_MS / 1000);
}

async function main(): Promise<void> {
  const directory = mkdtempSync(join(tmpdir(), 'unstuck-bench-db-'));
  const server = await startPostgres();
  try {
    const messages = seedLikeSession(1);
    const before = messages.slice(0, -STEP);
    const step = messages.slice(-STEP);
    const jsonFile = join(directory, 'session.json');
    const sqlitePath = join(directory, 'sessions.db');
    const sqlite = createSqliteStore(sqlitePath, { session: 'seed' });
    const postgres = createPostgresStore(server.url, { session: 'seed' });
    const jsonSave: Operation = { run: () => writeFileAtomic(jsonFile, Buffer.from(JSON.stringify(messages))) };
    const jsonLoad: Operation = { run: async () => JSON.parse(await readFile(jsonFile, 'utf8')) };
    await jsonSave.run();
    for (const store of [sqlite, postgres]) {
      await store.load();
      await store.save(messages);
    }
    // The step is taken off again (one small rewrite, untimed) so every append meets the same session.
    const append = (store: SessionStore): Operation => ({
      prepare: () => store.save(before),
      run: () => store.append!(step),
    });
    // A load by a store that has not read the session: what a node does when a turn lands on it.
    const load = (open: () => SessionStore): Operation => {
      let store: SessionStore | undefined;
      return {
        prepare: async () => {
          await store?.close();
          store = open();
        },
        run: async () => {
          const loaded = await store!.load();
          if (loaded.messages.length !== messages.length) throw new Error('the load is short');
        },
      };
    };
    const sqliteAppend = append(sqlite);
    const postgresAppend = append(postgres);
    const [jsonSaves, sqliteAppends, postgresAppends] = await timeInTurns(ROUNDS, [
      jsonSave,
      sqliteAppend,
      postgresAppend,
    ]);
    const cpuP50 = (operation: Operation) => quantile(cpuSamples.get(operation)!, 0.5).toFixed(2);
    const pool = new pg.Pool({ connectionString: server.url, max: 2 });
    const [jsonLoads, sqliteLoads, postgresLoads, pooledLoads] = await timeInTurns(Math.ceil(ROUNDS / 2), [
      jsonLoad,
      load(() => createSqliteStore(sqlitePath, { session: 'seed' })),
      load(() => createPostgresStore(server.url, { session: 'seed' })),
      load(() => createPostgresStore(pool, { session: 'seed' })),
    ]);
    await pool.end();
    await sqlite.close();
    await postgres.close();
    const rates = { json: 0, sqlite: 0, postgres: 0 };
    rates.json = await throughput('json', directory);
    rates.sqlite = await throughput('sqlite', sqlitePath);
    rates.postgres = await throughput('postgres', server.url);

    const row = (what: string, sorted: number[], baseline: number[], target: string, ok: boolean | undefined) =>
      `| ${what} | ${quantile(sorted, 0.5).toFixed(2)} | ${quantile(sorted, 0.1).toFixed(2)} – ${quantile(sorted, 0.9).toFixed(2)} | ${(quantile(sorted, 0.5) / quantile(baseline, 0.5)).toFixed(2)}x | ${target} | ${ok === undefined ? '' : ok ? 'yes' : 'NO'} |`;
    const jsonLoadP50 = quantile(jsonLoads!, 0.5);
    const lines = [
      `machine: ${cpus().length} cores, ${cpus()[0]?.model ?? 'unknown cpu'}, node ${process.version}; load average at the end ${loadavg()
        .map((value) => value.toFixed(1))
        .join(' ')}`,
      `session: ${messages.length} messages; a step is ${STEP} messages; ${ROUNDS} rounds of appends and ${Math.ceil(ROUNDS / 2)} of loads, each operation once per round in turn, after 2 warm-up rounds`,
      '',
      '| operation | p50 ms | p10 – p90 ms | vs JSON file p50 | target | ok |',
      '|---|---:|---:|---:|---:|---|',
      row('JSON file: save the whole session (durable, the baseline)', jsonSaves!, jsonSaves!, '', undefined),
      row(
        `SQLite: append one step (+${STEP} messages, one transaction, WAL fsync)`,
        sqliteAppends!,
        jsonSaves!,
        '<= 2 ms',
        quantile(sqliteAppends!, 0.5) <= 2,
      ),
      row(
        `PostgreSQL: append one step (+${STEP} messages, one transaction, commit fsync)`,
        postgresAppends!,
        jsonSaves!,
        '<= 5 ms',
        quantile(postgresAppends!, 0.5) <= 5,
      ),
      row('JSON file: readFile + JSON.parse (the baseline)', jsonLoads!, jsonLoads!, '', undefined),
      row(
        'SQLite: load (a store that has not read it)',
        sqliteLoads!,
        jsonLoads!,
        '<= 2x',
        quantile(sqliteLoads!, 0.5) <= 2 * jsonLoadP50,
      ),
      row(
        'PostgreSQL: load (a store that has not read it, its own connection: connect included)',
        postgresLoads!,
        jsonLoads!,
        '<= 4x',
        quantile(postgresLoads!, 0.5) <= 4 * jsonLoadP50,
      ),
      row(
        "PostgreSQL: load (a store that has not read it, on the service's shared pool)",
        pooledLoads!,
        jsonLoads!,
        '<= 4x',
        quantile(pooledLoads!, 0.5) <= 4 * jsonLoadP50,
      ),
      '',
      `this process's CPU per run, p50 ms: JSON file save ${cpuP50(jsonSave)}, SQLite append ${cpuP50(sqliteAppend)}, PostgreSQL append ${cpuP50(postgresAppend)} (the client's side only; the server's work is not in it)`,
      '',
      `| ${WRITERS} concurrent writers (processes), each on its own 3,785-message session, ${THROUGHPUT_MS / 1000} s | steps appended per second, all writers |`,
      '|---|---:|',
      `| JSON file per session (the whole file written again per step) | ${rates.json.toFixed(0)} |`,
      `| SQLite, one file | ${rates.sqlite.toFixed(0)} |`,
      `| PostgreSQL, one server | ${rates.postgres.toFixed(0)} |`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await server.stop();
    rmSync(directory, { recursive: true, force: true });
  }
}

await main();
