import { copyFile } from 'node:fs/promises';
import { Buffer } from 'node:buffer';
import { check } from '../../core/check.js';
import { UnstuckError } from '../../core/errors.js';
import { checkFormat } from '../../core/formats/check-format.js';
import { repairFormat } from '../../core/formats/repair-format.js';
import type { FormatRepairOptions } from '../../core/formats/format-types.js';
import type { Message } from '../../core/messages.js';
import { repair, type RepairOptions } from '../../core/repair.js';
import { createTranscriptStore, writeFileAtomic } from '../../session/index.js';
import type { Command } from '../command.js';
import { EXIT } from '../command.js';
import { elementLabel, formatDocument, readDocument } from '../documents.js';
import { historyOptionHelp, historyOptions, readHistoryFlags } from '../history-options.js';
import { isStoreUrl, readStoreDocument, writeStoreUrl } from '../store-url.js';

export const fixCommand: Command = {
  name: 'fix',
  summary: 'Repair a history so the provider accepts it. Prints the repaired document (changes on stderr); --write replaces FILE, keeping FILE.bak. Exit 0 valid, 1 violations remain, 2 bad input.',
  positionals: 'FILE',
  options: {
    ...historyOptions,
    write: { type: 'boolean', short: 'w' },
    unanswered: { type: 'string' },
    orphans: { type: 'string' },
    strongest: { type: 'boolean' },
  },
  optionHelp: {
    ...historyOptionHelp,
    write: 'Replace FILE atomically with the repaired document; the original is kept as FILE.bak',
    unanswered: "A call with no result: 'synthesize' an error result (default) or 'strip' the call",
    orphans: "A result whose call is gone: keep it as user text 'to-user' (default) or 'drop' it",
    strongest: 'Also make ids unique across the request and fold repeated user messages (what a heal after a 400 uses)',
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
      if (unanswered !== 'synthesize' && unanswered !== 'strip') throw new UnstuckError('USAGE', `--unanswered takes 'synthesize' or 'strip', not '${String(unanswered)}'`);
      options.unanswered = unanswered;
    }
    const orphans = values['orphans'];
    if (orphans !== undefined) {
      if (orphans !== 'to-user' && orphans !== 'drop') throw new UnstuckError('USAGE', `--orphans takes 'to-user' or 'drop', not '${String(orphans)}'`);
      options.orphans = orphans;
    }
    if (values['strongest'] === true) options.level = 'strongest';

    const document = isStoreUrl(file) ? await readStoreDocument(file, io) : await readDocument(file, io);
    const native = document.wire === 'openai-chat' ? undefined : document.native;
    let before: unknown[];
    let result: Outcome;
    if (native === undefined || document.wire === 'openai-chat') {
      before = check(document.messages, options);
      result = repair(document.messages, options);
    } else {
      // Another provider's wire: repaired by its own rules, and written back in it.
      const formatOptions: FormatRepairOptions = {};
      if (options.unanswered !== undefined) formatOptions.unanswered = options.unanswered;
      if (options.orphans !== undefined) formatOptions.orphans = options.orphans;
      if (options.thinking !== undefined) formatOptions.thinking = options.thinking;
      before = checkFormat(document.wire, native, formatOptions);
      result = repairFormat(document.wire, native, formatOptions);
    }
    const changed = result.changed || document.problems.length > 0;
    // Unchanged: the original bytes, not a re-serialisation.
    const output = changed ? formatDocument(document, result.messages) : document.text;

    if (values['write'] === true && changed && isStoreUrl(file)) {
      // One transaction; the session as it was is kept as the session ID.bak of the same database.
      await writeStoreUrl(file, io, result.messages as Message[], { backup: document.messages });
    } else if (values['write'] === true && changed) {
      await copyFile(file, `${file}.bak`);
      if (document.format === 'markdown') {
        const store = createTranscriptStore(file);
        try {
          await store.save(result.messages as Message[]);
        } finally {
          await store.close();
        }
      } else {
        await writeFileAtomic(file, Buffer.from(output, 'utf8'));
      }
    }

    if (values['json'] === true) {
      io.stdout.write(`${JSON.stringify({ file, format: document.format, ...(document.wire === 'openai-chat' ? {} : { wire: document.wire }), messages: result.messages, changes: result.changes, before, after: result.remaining, ...(document.problems.length > 0 ? { problems: document.problems } : {}) })}\n`);
    } else if (values['write'] !== true) {
      io.stdout.write(output);
    }
    writeReport(io, file, document.problems, result, values['write'] === true, changed, elementLabel(document.wire));
    return result.remaining.length === 0 ? EXIT.ok : EXIT.violations;
  },
};

function writeReport(
  io: Parameters<Command['run']>[1],
  file: string,
  problems: readonly { file: string; line?: number; why: string }[],
  result: Outcome,
  wrote: boolean,
  changed: boolean,
  label: string,
): void {
  const lines: string[] = [];
  for (const problem of problems) lines.push(`  damaged  ${problem.file}${problem.line === undefined ? '' : `:${problem.line}`}: ${problem.why}`);
  for (const change of result.changes) lines.push(`  ${change.kind.padEnd(26)} ${label}[${change.index}]${change.toolCallId === undefined ? '' : ` ${change.toolCallId}`}: ${change.detail}`);
  for (const left of result.remaining) lines.push(`  REMAINING ${left.rule} ${label}[${left.index}]: ${left.message} (${left.why})`);
  const head = !changed
    ? `${file}: valid, nothing to repair`
    : `${file}: ${result.changes.length} change${result.changes.length === 1 ? '' : 's'}${wrote ? `, written (original kept as ${file}.bak)` : ''}${result.remaining.length > 0 ? `, ${result.remaining.length} violation(s) remain` : ''}`;
  io.stderr.write(`${[head, ...lines].join('\n')}\n`);
}

/** What check and fix report, the same for OpenAI chat and the other wires. */
interface Outcome {
  messages: readonly unknown[];
  changes: readonly { kind: string; index: number; toolCallId?: string; detail: string }[];
  remaining: readonly { rule: string; index: number; message: string; why: string }[];
  changed: boolean;
}
