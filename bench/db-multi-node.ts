/**
 * `npm run multi-node:db`: six processes run agent turns against the emulator on four sessions
 * through one SQLite file, then through one PostgreSQL, for 30 s each (`-- SECONDS` for another
 * length), and every session is checked at the end (see test/session/database-multi-node.ts).
 */
import { join } from 'node:path';
import { bundleDatabaseChild } from '../test/session/database-bundle.js';
import { multiNodeRun } from '../test/session/database-multi-node.js';
import { temporaryDirectory } from '../test/session/helpers.js';
import { startPostgres } from '../test/support/postgres-server.js';

const durationMs = Number(process.argv[2] ?? 30) * 1000;
const child = await bundleDatabaseChild('database-node-child.ts');
const directory = await temporaryDirectory();
const server = await startPostgres();
try {
  for (const [kind, target] of [
    ['sqlite', join(directory.path, 'nodes.db')],
    ['postgres', server.url],
  ] as const) {
    const report = await multiNodeRun({
      child: child.path,
      kind,
      target,
      nodes: 6,
      sessions: 4,
      durationMs,
      prefix: kind,
    });
    console.log(
      `${kind.padEnd(8)} ${report.nodes} processes, ${report.sessions} sessions, ${durationMs / 1000} s: ${report.turns} turns acknowledged, all there once and whole; refused and retried: ${JSON.stringify(report.refused)}; ${report.messages} messages, every session valid`,
    );
  }
} finally {
  await server.stop();
  await directory.dispose();
  await child.dispose();
}
