import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Outcome } from './resume-poisoned.js';

/**
 * Writes an agent's session files as fixtures, with what made them: `meta.json` (agent, version,
 * commands, date, and per poisoning what happened on resume) and a README saying the same in prose.
 * Only the poisonings that reached the wire or got a 400 are saved: the others the agent mends by itself.
 */
export async function saveAgentFixtures(options: {
  directory: string;
  agent: string;
  version: string;
  /** The base name of the session file (`read-tool-loop.codex-0.171.0`). */
  name: string;
  original: string;
  outcomes: readonly Outcome[];
  extra: readonly (readonly [string, string])[];
  commands: Record<string, string>;
  setup: string;
  /** What resuming the file as written did (the table's first row). */
  originalResumed: string;
  /** Paragraphs after the table: the format as seen, and what the run found. */
  notes: readonly string[];
}): Promise<void> {
  await mkdir(options.directory, { recursive: true });
  const files: { file: string; what: string; resumed: string }[] = [
    { file: `${options.name}.jsonl`, what: 'the session file as the agent wrote it', resumed: options.originalResumed },
  ];
  await writeFile(join(options.directory, `${options.name}.jsonl`), options.original);
  for (const [file, text] of options.extra) {
    await writeFile(join(options.directory, file), text);
    files.push({ file, what: 'a second session: two tool calls in one answer, then text', resumed: 'not resumed' });
  }
  const poisonings = options.outcomes.map((outcome) => ({
    name: outcome.poisoning.name,
    what: outcome.poisoning.what,
    rule: outcome.poisoning.rule,
    reachedTheWire: outcome.sent,
    rejectedWith: [...new Set(outcome.rules)],
    exit: outcome.resumed.code,
    saved: saved(outcome) ? `${options.name}.${outcome.poisoning.name}.jsonl` : null,
  }));
  for (const outcome of options.outcomes.filter(saved)) {
    const file = `${options.name}.${outcome.poisoning.name}.jsonl`;
    await writeFile(join(options.directory, file), outcome.text);
    files.push({
      file,
      what: outcome.poisoning.what,
      resumed:
        outcome.rules.length > 0
          ? `400 ${[...new Set(outcome.rules)].join(', ')}, exit ${outcome.resumed.code}`
          : `exit ${outcome.resumed.code}`,
    });
  }
  const meta = {
    agent: options.agent,
    version: options.version,
    recorded: new Date().toISOString(),
    by: 'npm run e2e:agents -- --save-fixtures (e2e/agents)',
    setup: options.setup,
    commands: options.commands,
    files,
    poisonings,
  };
  await writeFile(join(options.directory, 'meta.json'), `${JSON.stringify(meta, null, 2)}\n`);
  const mended = poisonings
    .filter((entry) => !entry.reachedTheWire)
    .map(
      (entry) =>
        `\`${entry.name}\`${entry.rejectedWith.length > 0 ? ` (the resume still got the 400 ${entry.rejectedWith.join(', ')})` : ''}`,
    );
  const readme = [
    `# ${options.agent} ${options.version} session files, written by the real binary`,
    '',
    `Recorded ${meta.recorded.slice(0, 10)} by \`npm run e2e:agents -- --save-fixtures\` against unstuck's emulator, offline.`,
    `Setup: ${options.setup}.`,
    '',
    ...Object.entries(options.commands).map(([what, command]) => `- ${what}: \`${command}\``),
    '',
    'Nothing here is hand-written except the poisonings, made by e2e/agents from the first file (every other line byte for byte).',
    '',
    '| file | what it is | on resume straight at the strict emulator |',
    '| --- | --- | --- |',
    ...files.map((entry) => `| \`${entry.file}\` | ${entry.what.replaceAll('|', '\\|')} | ${entry.resumed} |`),
    '',
    mended.length === 0
      ? 'The agent mended none of the poisonings tried: each reached the wire.'
      : `Mended by the agent itself on resume (the construct never reached the wire): ${mended.join(', ')}.`,
    '',
    ...options.notes.flatMap((note) => [note, '']),
    'meta.json has the same in machine form (agent, version, commands, date, each poisoning and what the resume did).',
    '',
  ].join('\n');
  await writeFile(join(options.directory, 'README.md'), readme);
}

const saved = (outcome: Outcome): boolean => outcome.sent || outcome.rules.length > 0;
