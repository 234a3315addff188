import { lstat, readdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { isUnstuckError, UnstuckError } from '../../core/errors.js';
import type { Command } from '../command.js';
import { EXIT } from '../command.js';
import type { HistoryDocument } from '../documents.js';
import { decodeInput, readInputBytes } from '../read-input.js';
import { type RepairOutcome, writeRepairReport } from '../report/write-repair-report.js';
import { agentLabel, readAgentSession } from '../sessions/agent-readers.js';
import type { AgentSession } from '../sessions/agent-session.js';
import { scanOpenCodeDatabase } from '../sessions/opencode-command.js';
import { renderProgress, renderScanTable, type ScanRow } from '../sessions/scan-table.js';
import { sessionHomes } from '../sessions/session-homes.js';
import { assessSession, type SessionOutcome } from '../sessions/session-outcome.js';
import { fixCommand } from './fix.js';

export const scanCommand: Command = {
  name: 'scan',
  summary:
    'Find the session files of the agents unstuck knows (Claude Code, Cline, Roo Code, Codex, Gemini CLI, OpenCode) under their default homes or DIRs, and check each; writes nothing unless --fix. Exit 0 all valid, 1 problems, 2 bad input.',
  positionals: '[DIR...]',
  options: { json: { type: 'boolean' }, report: { type: 'string' }, fix: { type: 'boolean' } },
  optionHelp: {
    fix: 'Repair every session with problems in place, as fix --write does each (same guards, FILE.bak kept)',
    json: 'Machine-readable output: every session found, with its problems',
    report: 'Write a self-contained HTML page of every session with problems (what is wrong, what fix would change)',
  },
  async run({ values, positionals }, io) {
    const roots =
      positionals.length > 0
        ? positionals.map((path) => ({ agent: undefined as string | undefined, path, named: true }))
        : sessionHomes(io.env).map((home) => ({
            agent: home.agent as string | undefined,
            path: home.path,
            named: false,
          }));
    const found: Found[] = [];
    for (const root of roots) {
      const info = await lstat(root.path).catch(() => undefined);
      if (info === undefined || !info.isDirectory()) {
        // A default home that is not there: that agent is not installed. A DIR named that is not there: bad input.
        if (root.named)
          throw new UnstuckError('USAGE', 'not a directory (or a symbolic link to one: not followed)', {
            file: root.path,
          });
        continue;
      }
      const start = found.length;
      await walk(root.path, 0, found);
      if (root.agent !== undefined) for (const entry of found.slice(start)) entry.agent = root.agent;
    }
    const now = Date.now();
    const scanned: Scanned[] = [];
    const unread = new Map<string, number>();
    // On a terminal, a progress bar on stderr (cleared at the end): a home with thousands of sessions takes a while.
    // Never with --json, never when stderr is not a terminal (a log or a pipe gets no carriage returns).
    const json = values['json'] === true;
    const progress = io.stderr.isTTY === true && !json && found.length > PROGRESS_FROM;
    let drawn = '';
    for (const [at, candidate] of found.entries()) {
      if (progress) {
        const bar = renderProgress(at, found.length, columnsOf(io.stderr, io.env));
        if (bar !== drawn) io.stderr.write(`\r${bar}`);
        drawn = bar;
      }
      if (basename(candidate.path) === 'opencode.db') {
        scanned.push(...(await scanOpenCodeDatabase(candidate.path, now)));
        continue;
      }
      const result = await scanFile(candidate, io);
      if (result === undefined) continue;
      if ('unread' in result) unread.set(result.unread, (unread.get(result.unread) ?? 0) + 1);
      else scanned.push({ ...result, ageMs: now - candidate.mtimeMs });
    }
    if (progress) io.stderr.write('\r\u001b[2K');
    const broken = scanned.filter((entry) => entry.error === undefined && isBroken(entry));
    const unreadable = scanned.filter((entry) => entry.error !== undefined);
    if (json)
      io.stdout.write(
        `${JSON.stringify({
          sessions: scanned.map((entry) => ({
            file: entry.file,
            ...(entry.session === undefined
              ? {}
              : { agent: entry.session.agent, messages: entry.session.native.length }),
            ageSeconds: Math.round(entry.ageMs / 1000),
            ...(entry.outcome === undefined ? {} : { violations: entry.outcome.violations }),
            ...(entry.session === undefined || entry.session.problems.length === 0
              ? {}
              : { damaged: entry.session.problems }),
            ...(entry.error === undefined ? {} : { error: entry.error }),
          })),
          ...(unread.size === 0 ? {} : { notRead: Object.fromEntries(unread) }),
        })}\n`,
      );
    else if (io.stdout.isTTY === true) {
      // A table of every session, fitted to the terminal; the ones that cannot be read said in full below it.
      for (const line of renderScanTable(scanned.map(rowOf), columnsOf(io.stdout, io.env)))
        io.stdout.write(`${line}\n`);
      for (const entry of unreadable) io.stdout.write(`${describe(entry)}\n`);
      io.stdout.write(`${summary(scanned, broken.length, unreadable.length, unread)}\n`);
    } else {
      for (const entry of [...broken, ...unreadable]) io.stdout.write(`${describe(entry)}\n`);
      io.stdout.write(`${summary(scanned, broken.length, unreadable.length, unread)}\n`);
    }
    if (typeof values['report'] === 'string')
      await writeRepairReport(
        values['report'],
        broken.map((entry) => outcomeOf(entry.session as AgentSession, entry.outcome as SessionOutcome, entry.file)),
      );
    if (values['fix'] === true && broken.length > 0) return fixBroken(broken, io, unreadable.length);
    return broken.length > 0 || unreadable.length > 0 ? EXIT.violations : EXIT.ok;
  },
};

/**
 * `scan --fix`: each broken session goes through `fix --write` itself (its writer lock, the open-for-writing and
 * changed-since-read guards, FILE.bak), one after the other; one that cannot be written is reported and the rest
 * are still repaired. Exit 0 when every one was repaired and nothing was unreadable.
 */
async function fixBroken(broken: readonly Scanned[], io: Parameters<Command['run']>[1], unreadable: number) {
  let failed = 0;
  // OpenCode's sessions of one database are fixed together: one backup of it as it was, one transaction.
  const openCodeDone = new Map<string, number>();
  for (const entry of broken) {
    const agent = entry.session?.agent;
    const database = agent === 'opencode' ? entry.file.slice(0, entry.file.lastIndexOf('#')) : undefined;
    if (database !== undefined && openCodeDone.has(database)) {
      if (openCodeDone.get(database) !== EXIT.ok) failed += 1;
      continue;
    }
    try {
      const code = await fixCommand.run(
        {
          values: { write: true, ...(agent === undefined || agent === 'opencode' ? {} : { agent }) },
          positionals: [database ?? entry.file],
        },
        io,
      );
      if (database !== undefined) openCodeDone.set(database, code);
      if (code !== EXIT.ok) failed += 1;
    } catch (error) {
      if (!isUnstuckError(error)) throw error;
      failed += 1;
      if (database !== undefined) openCodeDone.set(database, EXIT.usage);
      io.stderr.write(`unstuck scan --fix: ${entry.file}: ${error.message}\n`);
    }
  }
  io.stdout.write(
    `fixed ${broken.length - failed} of ${broken.length} session${broken.length === 1 ? '' : 's'} with problems\n`,
  );
  return failed > 0 || unreadable > 0 ? EXIT.violations : EXIT.ok;
}

interface Found {
  path: string;
  /** The agent whose default home it was found under. */
  agent?: string;
  mtimeMs: number;
}

interface Scanned {
  file: string;
  ageMs: number;
  session?: AgentSession;
  outcome?: SessionOutcome;
  error?: string;
}

/** How deep below a root session files are looked for (Codex: sessions/YYYY/MM/DD; Gemini: tmp/<hash>/chats). */
const MAX_DEPTH = 8;

/** Every candidate session file below DIR. Symbolic links are not followed: nothing outside the roots is read. */
async function walk(directory: string, depth: number, found: Found[]): Promise<void> {
  let entries: import('node:fs').Dirent[];
  try {
    entries = await readdir(directory, { withFileTypes: true });
  } catch {
    return;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) {
      if (depth < MAX_DEPTH) await walk(path, depth + 1, found);
    } else if (entry.isFile() && isCandidate(entry.name)) {
      const info = await lstat(path).catch(() => undefined);
      if (info?.isFile() === true) found.push({ path, mtimeMs: info.mtimeMs });
    }
  }
}

function isCandidate(name: string): boolean {
  return (
    name.endsWith('.jsonl') ||
    name === 'api_conversation_history.json' ||
    name === 'opencode.db' ||
    /^(checkpoint-.*|session-.*)\.json$/.test(name)
  );
}

/** Files recognised by name in a format not read (Gemini CLI's chats before JSONL: one JSON document each). */
function unreadAgent(path: string): string | undefined {
  const name = basename(path);
  if (/[\\/]\.gemini[\\/]/.test(path) && name.endsWith('.json')) return 'Gemini CLI (JSON chat)';
  return undefined;
}

async function scanFile(
  candidate: Found,
  io: Parameters<Command['run']>[1],
): Promise<Omit<Scanned, 'ageMs'> | { unread: string } | undefined> {
  const file = candidate.path;
  let text: string;
  try {
    text = decodeInput(await readInputBytes(file, io), file).text;
  } catch (error) {
    if (!isUnstuckError(error)) throw error;
    return { file, error: error.message };
  }
  let session: AgentSession | undefined;
  try {
    session = readAgentSession(file, text);
  } catch (error) {
    if (!isUnstuckError(error)) throw error;
    return { file, error: `${error.position === undefined ? '' : `${error.position}: `}${error.message}` };
  }
  if (session === undefined) {
    const agent = unreadAgent(file);
    if (agent !== undefined) return { unread: agent };
    if (/^rollout-.*\.jsonl$/.test(basename(file)))
      return { file, error: 'named as a Codex rollout, but its first line is not a session_meta record (damaged?)' };
    // In Claude Code's own folder, a .jsonl none of whose first lines is an event is a session damaged beyond reading.
    if ((candidate.agent === 'Claude Code' || /[\\/]\.claude[\\/]projects[\\/]/.test(file)) && file.endsWith('.jsonl'))
      return {
        file,
        error: "in Claude Code's projects folder, but no line of it is a Claude Code event (damaged beyond JSON?)",
      };
    return undefined;
  }
  try {
    return { file, session, outcome: assessSession(session) };
  } catch (error) {
    if (!isUnstuckError(error)) throw error;
    return { file, session, error: error.message };
  }
}

/** More files than this, and a terminal, and the scan shows a progress bar. */
const PROGRESS_FROM = 50;

/** A terminal's width: its own columns, else $COLUMNS, else 80. */
function columnsOf(stream: object, env: Readonly<Record<string, string | undefined>>): number {
  const columns = (stream as { columns?: unknown }).columns;
  if (typeof columns === 'number' && columns > 0) return columns;
  const fromEnv = Number(env['COLUMNS']);
  return Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : 80;
}

function rowOf(entry: Scanned): ScanRow {
  const session = entry.session;
  const base = {
    agent: session === undefined ? '?' : agentLabel(session.agent),
    age: age(entry.ageMs),
    messages: session?.native.length,
    path: entry.file,
  };
  if (entry.error !== undefined) return { ...base, problems: 'cannot be read (below)' };
  const violations = entry.outcome?.violations ?? [];
  const damaged = session?.problems ?? [];
  const count = violations.length + damaged.length;
  if (count === 0) return { ...base, problems: 'ok' };
  const what: string[] = [...new Set(violations.map((violation) => violation.rule))];
  if (damaged.length > 0)
    what.push(
      `damaged line${damaged.length === 1 ? '' : 's'} ${damaged.map((problem) => problem.line ?? '?').join(', ')}`,
    );
  return { ...base, problems: `${count}: ${what.join(', ')}` };
}

function isBroken(entry: Scanned): boolean {
  return (entry.outcome?.violations.length ?? 0) > 0 || (entry.session?.problems.length ?? 0) > 0;
}

function describe(entry: Scanned): string {
  if (entry.error !== undefined) return `${entry.file}: cannot be read: ${entry.error}`;
  const session = entry.session as AgentSession;
  const violations = (entry.outcome as SessionOutcome).violations;
  const parts = violations.map((violation) => {
    const lines = session.sources[violation.index];
    return `${violation.rule} at messages[${violation.index}]${lines === undefined || lines.length === 0 ? '' : ` (${session.sourceKind} ${lines.join(', ')})`}`;
  });
  for (const problem of session.problems) parts.push(`damaged line ${problem.line ?? '?'}`);
  const count = violations.length + session.problems.length;
  return `${entry.file}: ${agentLabel(session.agent)}, ${session.native.length} messages, ${age(entry.ageMs)} old: ${count} problem${count === 1 ? '' : 's'}: ${parts.join('; ')}`;
}

function summary(
  scanned: readonly Scanned[],
  broken: number,
  unreadable: number,
  unread: ReadonlyMap<string, number>,
): string {
  const byAgent = new Map<string, number>();
  for (const entry of scanned) {
    const label = entry.session === undefined ? 'unreadable' : agentLabel(entry.session.agent);
    byAgent.set(label, (byAgent.get(label) ?? 0) + 1);
  }
  const agents = [...byAgent].map(([label, count]) => `${label} ${count}`).join(', ');
  const valid = scanned.length - broken - unreadable;
  const notRead =
    unread.size === 0
      ? ''
      : `; found but not read (no reader yet): ${[...unread].map(([agent, count]) => `${agent} ${count} file${count === 1 ? '' : 's'}`).join(', ')}`;
  return `scanned ${scanned.length} session${scanned.length === 1 ? '' : 's'}${agents === '' ? '' : ` (${agents})`}: ${broken} with problems, ${unreadable} that cannot be read, ${valid} valid${notRead}`;
}

function age(ms: number): string {
  const minutes = Math.max(0, Math.round(ms / 60_000));
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.round(minutes / 60);
  if (hours < 48) return `${hours} h`;
  return `${Math.round(hours / 24)} d`;
}

/** A session as the report shows it: what check found, and what fix would change (nothing is written). */
function outcomeOf(session: AgentSession, outcome: SessionOutcome, file: string): RepairOutcome {
  const document: HistoryDocument = {
    file,
    format: 'agent-session',
    wire: session.wire,
    items: session.native,
    messages: [],
    problems: session.problems,
    text: '',
    bytes: new Uint8Array(),
    indent: 0,
    agent: session,
  };
  return {
    document,
    before: outcome.violations,
    changes: outcome.changes,
    remaining: outcome.remaining,
    output: outcome.repaired,
  };
}
