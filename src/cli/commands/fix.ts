import { Buffer } from 'node:buffer';
import { access, lstat, readlink, stat } from 'node:fs/promises';
import { check } from '../../core/check.js';
import { UnstuckError } from '../../core/errors.js';
import type { Message } from '../../core/messages.js';
import type { RepairOptions, RepairResult } from '../../core/options.js';
import { repair } from '../../core/repair.js';
import { writeFileAtomic } from '../../session/atomic-write.js';
import { createTranscriptStore } from '../../session/index.js';
import type { WriterLock } from '../../session/writer-lock.js';
import { acquireWriterLock } from '../../session/writer-lock.js';
import type { Command } from '../command.js';
import { EXIT } from '../command.js';
import { elementLabel, formatDocument, type HistoryDocument, originalText, readDocument } from '../documents.js';
import { historyOptionHelp, historyOptions, readFormatFlag, readHistoryFlags } from '../history-options.js';
import { findNestingOffset, lineAndColumn } from '../json-error-offset.js';
import type { ReportViolation } from '../report/render-repair-report.js';
import { writeRepairReport } from '../report/write-repair-report.js';
import { agentNames } from '../sessions/agent-readers.js';
import { fixOpenCodeTarget, openCodeTarget } from '../sessions/opencode-command.js';
import { refuseIfChanged, refuseIfOpenForWriting } from '../sessions/write-guard.js';
import { isStoreUrl, readStoreDocument, writeStoreUrl } from '../store-url.js';

export const fixCommand: Command = {
  name: 'fix',
  summary:
    'Repair a history so the provider accepts it. Prints the repaired document (changes on stderr); --write replaces FILE, keeping FILE.bak. Exit 0 valid, 1 violations remain, 2 bad input.',
  positionals: 'FILE',
  options: {
    ...historyOptions,
    write: { type: 'boolean', short: 'w' },
    unanswered: { type: 'string' },
    orphans: { type: 'string' },
    strongest: { type: 'boolean' },
    agent: { type: 'string' },
    report: { type: 'string' },
    session: { type: 'string' },
  },
  optionHelp: {
    ...historyOptionHelp,
    write: 'Replace FILE atomically with the repaired document; the original is kept as FILE.bak',
    unanswered: "A call with no result: 'synthesize' an error result (default) or 'strip' the call",
    orphans: "A result whose call is gone: keep it as user text 'to-user' (default) or 'drop' it",
    strongest: 'Also make ids unique across the request and fold repeated user messages (what a heal after a 400 uses)',
    agent: `Read FILE as this agent's session file (${agentNames.join(', ')}; default: recognised from the content)`,
    report: 'Write a self-contained HTML page showing what was wrong and what was changed to this file',
    session:
      "For OpenCode's opencode.db: the session to repair (also FILE#ID; default: every session). --write changes only its tool parts' rows, in one transaction, after a backup (FILE.bak)",
  },
  async run({ values, positionals }, io) {
    const flags = readHistoryFlags(values);
    const [file, extra] = positionals;
    if (file === undefined || extra !== undefined) {
      io.stderr.write('unstuck fix: name exactly one FILE (- for stdin)\n');
      return EXIT.usage;
    }
    if (values['write'] === true && file === '-') throw new UnstuckError('USAGE', '--write needs a file, not stdin');
    const options: RepairOptions = { ...flags };
    const unanswered = values['unanswered'];
    if (unanswered !== undefined) {
      if (unanswered !== 'synthesize' && unanswered !== 'strip')
        throw new UnstuckError('USAGE', `--unanswered takes 'synthesize' or 'strip', not '${String(unanswered)}'`);
      options.unanswered = unanswered;
    }
    const orphans = values['orphans'];
    if (orphans !== undefined) {
      if (orphans !== 'to-user' && orphans !== 'drop')
        throw new UnstuckError('USAGE', `--orphans takes 'to-user' or 'drop', not '${String(orphans)}'`);
      options.orphans = orphans;
    }
    if (values['strongest'] === true) options.level = 'strongest';
    // OpenCode's SQLite database: its sessions' tool parts are repaired in place (sessions/opencode-command.ts).
    const openCode = await openCodeTarget(file, values, io);
    if (openCode !== undefined) return fixOpenCodeTarget(openCode, values, io);

    // With --write, the file is read, backed up and replaced under its writer lock: a second
    // `fix --write` waits, then reads the repaired file, and FILE.bak keeps the true original.
    // A database session is rewritten in one transaction instead (the store's own lease and version check).
    const lock = values['write'] === true && !isStoreUrl(file) ? await lockForWrite(file, io) : undefined;
    try {
      return await fixFile(file, options, values, io, lock);
    } finally {
      await lock?.release();
    }
  },
};

/** How long `fix --write` waits for another writer of the same file. */
const LOCK_TIMEOUT_MS = 10_000;

async function lockForWrite(file: string, io: Parameters<Command['run']>[1]): Promise<WriterLock> {
  // A file that cannot be read is reported as that, not as a lock file that cannot be made.
  if (
    !(await access(file).then(
      () => true,
      () => false,
    ))
  )
    await readDocument(file, io);
  return acquireWriterLock(file, { timeoutMs: LOCK_TIMEOUT_MS });
}

async function fixFile(
  file: string,
  options: RepairOptions,
  values: Parameters<Command['run']>[0]['values'],
  io: Parameters<Command['run']>[1],
  lock: WriterLock | undefined,
): Promise<number> {
  const document = isStoreUrl(file)
    ? await readStoreDocument(file, io)
    : await readDocument(file, io, {
        ...readFormatFlag(values),
        ...(typeof values['agent'] === 'string' ? { agent: values['agent'] } : {}),
      });
  // Another provider's wire is repaired by its own rules, and written back in it.
  const wireOptions: RepairOptions = { ...options, format: document.wire };
  const before = check(document.items, wireOptions);
  const result = repair(document.items, wireOptions);
  // An agent's session keeps the lines it cannot read as they are: they alone are no reason to rewrite it.
  const changed = result.changed || (document.format !== 'agent-session' && document.problems.length > 0);
  // Unchanged: the original bytes, not a re-serialisation.
  const output = changed ? formatRepaired(document, result.messages) : originalText(document);
  // A JSONL line that could not be read is not in the output: a rewrite would delete it.
  const unreadable = document.format === 'jsonl' ? document.problems.length : 0;
  // An agent's session keeps them as they are: still a problem the exit code reports, but no reason not to write.
  const damaged = document.format === 'agent-session' ? document.problems.length : 0;

  if (values['write'] === true && changed && isStoreUrl(file)) {
    // One transaction; the session as it was is kept as the session ID.bak of the same database.
    await writeStoreUrl(file, io, result.messages as Message[], { backup: document.messages });
  } else if (lock !== undefined && changed) {
    if (unreadable > 0) {
      const first = document.problems[0]!;
      throw new UnstuckError(
        'INPUT_INVALID',
        `${unreadable} line(s) cannot be read (${first.why}); nothing written, since writing would delete them: mend or remove them by hand, then run fix again`,
        { file, position: String(first.line ?? 1) },
      );
    }
    await replaceKeepingBackup(document, result.messages, output, lock);
  }
  if (typeof values['report'] === 'string')
    await writeRepairReport(values['report'], [
      {
        document,
        before: before as ReportViolation[],
        changes: result.changes,
        remaining: result.remaining,
        output: result.messages,
      },
    ]);

  if (values['json'] === true) {
    io.stdout.write(
      `${JSON.stringify({ file, format: document.format, ...(document.wire === 'openai-chat' ? {} : { wire: document.wire }), messages: result.messages, changes: result.changes, before, after: result.remaining, ...(document.problems.length > 0 ? { problems: document.problems } : {}) })}\n`,
    );
  } else if (values['write'] !== true) {
    io.stdout.write(output);
  }
  writeReport(
    io,
    file,
    document.problems,
    result,
    values['write'] === true,
    changed,
    elementLabel(document.wire),
    unreadable,
  );
  return result.remaining.length === 0 && unreadable === 0 && damaged === 0 ? EXIT.ok : EXIT.violations;
}

/** Nesting deeper than this is named when writing the repaired history back runs out of stack. */
const REPORTED_DEPTH = 1000;

function formatRepaired(document: HistoryDocument, messages: readonly unknown[]): string {
  try {
    return formatDocument(document, messages);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    // JSON.parse reads any depth; JSON.stringify recurses, and a value nested 100,000 deep overflows it.
    const offset = findNestingOffset(document.text, REPORTED_DEPTH);
    throw new UnstuckError(
      'INPUT_INVALID',
      `nested too deeply to write back (${error.message}); nothing written`,
      offset === -1 ? { file: document.file } : { file: document.file, position: lineAndColumn(document.text, offset) },
    );
  }
}

/**
 * FILE.bak gets the bytes this run read (not a second read of FILE, which another writer may have
 * replaced), with FILE's permissions, and replaces whatever FILE.bak was by a rename: an existing
 * FILE.bak that is a symbolic link (a repository can ship one) is replaced, never written through.
 * Then FILE is replaced, keeping its permissions. A read-only FILE, or a FILE that is a symbolic
 * link, is refused, not replaced.
 */
async function replaceKeepingBackup(
  document: HistoryDocument,
  messages: readonly unknown[],
  output: string,
  lock: WriterLock,
): Promise<void> {
  const file = document.file;
  // A link is not replaced by a file, nor written through (a repository can ship one pointing anywhere).
  if ((await lstat(file)).isSymbolicLink()) {
    throw new UnstuckError(
      'IO',
      `is a symbolic link (to ${await readlink(file)}): not replaced, nothing written; run fix --write on the file it points to`,
      { file },
    );
  }
  const mode = (await stat(file)).mode & 0o7777;
  // The agent may still be running on it, or have appended since it was read: then nothing is written.
  await refuseIfOpenForWriting(file);
  await refuseIfChanged(file, document.bytes);
  if ((mode & 0o200) === 0) {
    throw new UnstuckError(
      'IO',
      `read-only (mode ${mode.toString(8).padStart(4, '0')}): not replaced, nothing written; make it writable (chmod u+w) to let fix --write repair it`,
      { file },
    );
  }
  await writeFileAtomic(`${file}.bak`, document.bytes, { mode });
  if (document.format === 'markdown') {
    const store = createTranscriptStore(file, { lock });
    try {
      await store.save(messages as Message[]);
    } finally {
      await store.close();
    }
  } else {
    await writeFileAtomic(file, Buffer.from(output, 'utf8'), { mode });
  }
}

function writeReport(
  io: Parameters<Command['run']>[1],
  file: string,
  problems: readonly { file: string; line?: number; why: string }[],
  result: RepairResult<unknown>,
  wrote: boolean,
  changed: boolean,
  label: string,
  unreadable: number,
): void {
  const lines: string[] = [];
  for (const problem of problems)
    lines.push(`  damaged  ${problem.file}${problem.line === undefined ? '' : `:${problem.line}`}: ${problem.why}`);
  for (const change of result.changes)
    lines.push(
      `  ${change.kind.padEnd(26)} ${label}[${change.index}]${change.toolCallId === undefined ? '' : ` ${change.toolCallId}`}: ${change.detail}`,
    );
  for (const left of result.remaining)
    lines.push(`  REMAINING ${left.rule} ${label}[${left.index}]: ${left.message} (${left.why})`);
  const head = !changed
    ? `${file}: valid, nothing to repair`
    : `${file}: ${result.changes.length} change${result.changes.length === 1 ? '' : 's'}${wrote ? `, written (original kept as ${file}.bak)` : ''}${unreadable > 0 ? `, ${unreadable} line(s) that cannot be read are left out of the output` : ''}${result.remaining.length > 0 ? `, ${result.remaining.length} violation(s) remain` : ''}`;
  io.stderr.write(`${[head, ...lines].join('\n')}\n`);
}
