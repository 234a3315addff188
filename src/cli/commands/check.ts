import { check } from '../../core/check.js';
import { isUnstuckError } from '../../core/errors.js';
import type { Command } from '../command.js';
import { EXIT } from '../command.js';
import { readDocument } from '../documents.js';
import { historyOptionHelp, historyOptions, readHistoryFlags } from '../history-options.js';
import { describeFailure } from '../run.js';

export const checkCommand: Command = {
  name: 'check',
  summary: 'Name every violation in a history, the way the provider would. Exit 0 valid, 1 violations, 2 bad input.',
  positionals: 'FILE...',
  options: historyOptions,
  optionHelp: historyOptionHelp,
  async run({ values, positionals }, io) {
    const flags = readHistoryFlags(values);
    if (positionals.length === 0) {
      io.stderr.write('unstuck check: name at least one FILE (- for stdin)\n');
      return EXIT.usage;
    }
    let exit: number = EXIT.ok;
    const files: unknown[] = [];
    for (const file of positionals) {
      let document;
      try {
        document = await readDocument(file, io);
      } catch (error) {
        if (!isUnstuckError(error)) throw error;
        io.stderr.write(`${describeFailure('check', error)}\n`);
        exit = EXIT.usage;
        continue;
      }
      const violations = check(document.messages, flags);
      if ((violations.length > 0 || document.problems.length > 0) && exit === EXIT.ok) exit = EXIT.violations;
      if (values['json'] === true) {
        files.push({ file, format: document.format, messages: document.messages.length, violations, ...(document.problems.length > 0 ? { problems: document.problems } : {}) });
        continue;
      }
      if (violations.length === 0 && document.problems.length === 0) {
        io.stdout.write(`${file}: valid for ${flags.profile} (${document.messages.length} messages)\n`);
        continue;
      }
      const count = violations.length + document.problems.length;
      io.stdout.write(`${file}: ${count} problem${count === 1 ? '' : 's'} for ${flags.profile} (${document.messages.length} messages)\n`);
      for (const problem of document.problems) io.stdout.write(`  ${problem.file}${problem.line === undefined ? '' : `:${problem.line}`}  damaged: ${problem.why}\n`);
      for (const violation of violations) {
        io.stdout.write(`  messages[${violation.index}]  ${violation.rule}${violation.toolCallId === undefined ? '' : ` (${violation.toolCallId})`}: ${violation.message}\n`);
      }
    }
    if (values['json'] === true) io.stdout.write(`${JSON.stringify({ files })}\n`);
    return exit;
  },
};
