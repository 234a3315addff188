import { resolve } from 'node:path';
import { UnstuckError } from '../../core/errors.js';
import type { RepairOptions } from '../../core/options.js';
import { isProfileName, type ProfileName } from '../../core/profiles.js';
import type { Io } from '../io.js';
import type { AgentSession } from './agent-session.js';
import type { OpenCodeDbSession } from './opencode-database.js';
import { isSqliteFile, readOpenCodeDatabase, writeOpenCodeEdits } from './opencode-database.js';
import type { OpenCodeAssessment } from './opencode-session.js';
import { assessOpenCode } from './opencode-session.js';
import { describeEdit } from './opencode-writeback.js';
import type { SessionOutcome } from './session-outcome.js';

/**
 * `check`, `fix` and `scan` on OpenCode's database: FILE is `opencode.db` (any SQLite file is looked at; one that
 * is not OpenCode's is refused with one line), the session `--session ID` or `FILE#ID`, every session when none
 * is named. Each session is shown as `FILE#ID`.
 */
export interface OpenCodeTarget {
  file: string;
  /** As given on the command line (what is printed). */
  label: string;
  session?: string;
}

type Values = Record<string, string | boolean | string[] | boolean[] | undefined>;

/** The database named by `argument` (with `#SESSION`, or `--session`), or undefined when it is no SQLite file. */
export async function openCodeTarget(argument: string, values: Values, io: Io): Promise<OpenCodeTarget | undefined> {
  if (argument === '-') return undefined;
  const hash = argument.lastIndexOf('#');
  const candidates: [string, string | undefined][] = [[argument, undefined]];
  if (hash > 0) candidates.push([argument.slice(0, hash), argument.slice(hash + 1)]);
  for (const [label, fromHash] of candidates) {
    const file = resolve(io.cwd, label);
    if (!(await isSqliteFile(file))) continue;
    const named = typeof values['session'] === 'string' ? values['session'] : undefined;
    if (named !== undefined && fromHash !== undefined && named !== fromHash)
      throw new UnstuckError('USAGE', `names two sessions: #${fromHash} and --session ${named}`, { file: label });
    const session = named ?? fromHash;
    return session === undefined || session === '' ? { file, label } : { file, label, session };
  }
  return undefined;
}

function repairOptions(values: Values): Omit<RepairOptions, 'format' | 'profile'> & { profile?: ProfileName } {
  const options: Omit<RepairOptions, 'format' | 'profile'> & { profile?: ProfileName } = {};
  const profile = profileOf(values);
  if (profile !== undefined) options.profile = profile;
  if (typeof values['model'] === 'string') options.model = values['model'];
  if (values['request'] === true) options.scope = 'request';
  if (values['thinking'] === 'on' || values['thinking'] === 'off') options.thinking = values['thinking'] === 'on';
  if (values['unanswered'] === 'synthesize' || values['unanswered'] === 'strip')
    options.unanswered = values['unanswered'];
  if (values['orphans'] === 'to-user' || values['orphans'] === 'drop') options.orphans = values['orphans'];
  if (values['strongest'] === true) options.level = 'strongest';
  return options;
}

function profileOf(values: Values): ProfileName | undefined {
  const profile = values['profile'];
  if (typeof profile !== 'string') return undefined;
  if (!isProfileName(profile)) throw new UnstuckError('USAGE', `unknown profile '${profile}'`);
  return profile;
}

export interface OpenCodeChecked {
  label: string;
  session: OpenCodeDbSession;
  assessment: OpenCodeAssessment;
}

/** Every session of the target, read and assessed (nothing written). */
export async function assessOpenCodeTarget(target: OpenCodeTarget, values: Values): Promise<OpenCodeChecked[]> {
  const sessions = await readOpenCodeDatabase(target.file, target.session);
  const options = repairOptions(values);
  return sessions.map((session) => ({
    label: `${target.label}#${session.id}`,
    session,
    assessment: assessOpenCode(session.history, options),
  }));
}

/** `check` on a database: one line per session (the problems under it), or one JSON entry each. Exit 0 or 1. */
export async function checkOpenCodeTarget(
  target: OpenCodeTarget,
  values: Values,
  io: Io,
): Promise<{ exit: number; json: unknown[] }> {
  let exit = 0;
  const json: unknown[] = [];
  for (const { label, session, assessment } of await assessOpenCodeTarget(target, values)) {
    const { violations, messages, profile } = assessment;
    const problems = violations.length + session.problems.length;
    if (problems > 0) exit = 1;
    if (values['json'] === true) {
      json.push({
        file: label,
        format: 'agent-session',
        agent: 'opencode',
        store: 'opencode.db',
        profile,
        messages: messages.length,
        violations,
        ...(session.problems.length > 0 ? { problems: session.problems } : {}),
      });
      continue;
    }
    const rules = `${profile} (OpenCode session, ${messages.length} messages)`;
    if (problems === 0) {
      io.stdout.write(`${label}: valid for ${rules}\n`);
      continue;
    }
    io.stdout.write(`${label}: ${problems} problem${problems === 1 ? '' : 's'} for ${rules}\n`);
    for (const problem of session.problems) io.stdout.write(`  damaged: ${problem.why}\n`);
    for (const violation of violations)
      io.stdout.write(
        `  messages[${violation.index}] ${violation.rule}${violation.toolCallId === undefined ? '' : ` (${violation.toolCallId})`}: ${violation.message}\n`,
      );
  }
  return { exit, json };
}

/**
 * `fix` on a database: what each session's repair comes to in its tool parts (stderr), and with --write those
 * rows changed (writeOpenCodeEdits). A change the rows cannot hold is listed as `not written` and leaves the
 * exit at 1; so does a violation still there once the edits are made.
 */
export async function fixOpenCodeTarget(target: OpenCodeTarget, values: Values, io: Io): Promise<number> {
  const write = values['write'] === true;
  const checked = await assessOpenCodeTarget(target, values);
  const changes = checked
    .filter(({ assessment }) => assessment.plan.edits.length > 0)
    .map(({ session, assessment }) => ({ session, edits: assessment.plan.edits }));
  // Every session's rows in one transaction, after one backup of the database as it was.
  const backup = write && changes.length > 0 ? (await writeOpenCodeEdits(target.file, changes)).backup : undefined;
  let exit = 0;
  const json: unknown[] = [];
  for (const { label, session, assessment } of checked) {
    const { plan, violations, after } = assessment;
    const lines: string[] = [];
    let head: string;
    if (violations.length === 0) head = `${label}: valid, nothing to repair`;
    else {
      const wrote =
        backup !== undefined && plan.edits.length > 0 ? `, written (the database as it was kept as ${backup})` : '';
      head = `${label}: ${violations.length} violation${violations.length === 1 ? '' : 's'}, ${plan.edits.length} part${plan.edits.length === 1 ? '' : 's'} to change${wrote}${after.length > 0 ? `, ${after.length} violation(s) remain` : ''}`;
      for (const edit of plan.edits) lines.push(`  ${describeEdit(edit)}`);
      for (const line of plan.unwritable) lines.push(`  not written: ${line}`);
      for (const left of after) lines.push(`  REMAINING ${left.rule} messages[${left.index}]: ${left.message}`);
    }
    for (const problem of session.problems) lines.push(`  damaged: ${problem.why}`);
    if (after.length > 0 || plan.unwritable.length > 0 || session.problems.length > 0) exit = 1;
    if (values['json'] === true)
      json.push({
        file: label,
        agent: 'opencode',
        before: violations,
        edits: plan.edits,
        unwritable: plan.unwritable,
        after,
        written: backup !== undefined && plan.edits.length > 0,
      });
    io.stderr.write(`${[head, ...lines].join('\n')}\n`);
  }
  if (values['json'] === true) io.stdout.write(`${JSON.stringify({ sessions: json })}\n`);
  return exit;
}

/** One session of a database as `scan` lists it: an AgentSession (read only: fix writes the rows) and its outcome. */
export interface OpenCodeScanned {
  file: string;
  ageMs: number;
  session?: AgentSession;
  outcome?: SessionOutcome;
  error?: string;
}

/** `scan`: every session of the database at FILE, checked under its provider's profile; nothing written. */
export async function scanOpenCodeDatabase(file: string, now: number): Promise<OpenCodeScanned[]> {
  let checked: OpenCodeChecked[];
  try {
    checked = await assessOpenCodeTarget({ file, label: file }, {});
  } catch (error) {
    if (!(error instanceof UnstuckError)) throw error;
    return [{ file, ageMs: 0, error: error.message }];
  }
  return checked.map(({ label, session, assessment }) => ({
    file: label,
    ageMs: Math.max(0, now - session.updated),
    session: {
      agent: 'opencode',
      wire: 'openai-chat',
      native: assessment.messages,
      sources: assessment.sources.map(() => []),
      sourceKind: 'element',
      problems: session.problems,
      write() {
        throw new UnstuckError('USAGE', "a session of OpenCode's database is repaired by fix on the database", {
          file: label,
        });
      },
    },
    outcome: {
      violations: assessment.violations,
      changes: assessment.changes,
      remaining: assessment.remaining,
      repaired: assessment.repaired,
    },
  }));
}
