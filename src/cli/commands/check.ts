import { check } from '../../core/check.js';
import { isUnstuckError } from '../../core/errors.js';
import type { Command } from '../command.js';
import { EXIT } from '../command.js';
import { describeFailure } from '../describe-failure.js';
import { elementLabel, type HistoryDocument, readDocument } from '../documents.js';
import { historyOptionHelp, historyOptions, readFormatFlag, readHistoryFlags } from '../history-options.js';
import { agentLabel, agentNames } from '../sessions/agent-readers.js';
import { checkOpenCodeTarget, openCodeTarget } from '../sessions/opencode-command.js';
import { isStoreUrl, readStoreDocument } from '../store-url.js';

export const checkCommand: Command = {
  name: 'check',
  summary: 'Name every violation in a history, the way the provider would. Exit 0 valid, 1 violations, 2 bad input.',
  positionals: 'FILE...',
  options: { ...historyOptions, agent: { type: 'string' }, session: { type: 'string' } },
  optionHelp: {
    ...historyOptionHelp,
    agent: `Read each FILE as this agent's session file (${agentNames.join(', ')}; default: recognised from the content)`,
    session: "For OpenCode's opencode.db: the session to check (also FILE#ID; default: every session)",
  },
  async run({ values, positionals }, io) {
    const flags = readHistoryFlags(values);
    const readOptions = {
      ...readFormatFlag(values),
      ...(typeof values['agent'] === 'string' ? { agent: values['agent'] } : {}),
    };
    if (positionals.length === 0) {
      io.stderr.write('unstuck check: name at least one FILE (- for stdin)\n');
      return EXIT.usage;
    }
    let exit: number = EXIT.ok;
    const files: unknown[] = [];
    for (const file of positionals) {
      let document: HistoryDocument;
      try {
        // OpenCode's SQLite database: each of its sessions (or the one named) is checked.
        const openCode = await openCodeTarget(file, values, io);
        if (openCode !== undefined) {
          const checked = await checkOpenCodeTarget(openCode, values, io);
          files.push(...checked.json);
          if (checked.exit !== EXIT.ok && exit === EXIT.ok) exit = checked.exit;
          continue;
        }
        document = isStoreUrl(file) ? await readStoreDocument(file, io) : await readDocument(file, io, readOptions);
      } catch (error) {
        if (!isUnstuckError(error)) throw error;
        io.stderr.write(`${describeFailure('check', error)}\n`);
        exit = EXIT.usage;
        continue;
      }
      // Another provider's wire is checked by its own rules; --profile names OpenAI-chat providers.
      const violations = check(document.items, { ...flags, format: document.wire });
      const rules =
        document.agent !== undefined
          ? `${document.wire} (${agentLabel(document.agent.agent)} session)`
          : document.wire === 'openai-chat'
            ? flags.profile
            : document.wire;
      const count = document.items.length;
      const label = elementLabel(document.wire);
      if ((violations.length > 0 || document.problems.length > 0) && exit === EXIT.ok) exit = EXIT.violations;
      if (values['json'] === true) {
        files.push({
          file,
          format: document.format,
          ...(document.wire === 'openai-chat' ? {} : { wire: document.wire }),
          ...(document.agent === undefined ? {} : { agent: document.agent.agent }),
          // Which format, and what showed it (docs/decisions/recognise-or-refuse.md).
          recognised: { as: document.wire, evidence: document.evidence ?? 'read from the store' },
          messages: count,
          violations,
          ...(document.problems.length > 0 ? { problems: document.problems } : {}),
        });
        continue;
      }
      if (violations.length === 0 && document.problems.length === 0) {
        io.stdout.write(`${file}: valid for ${rules} (${count} ${label})\n`);
        continue;
      }
      const problems = violations.length + document.problems.length;
      io.stdout.write(`${file}: ${problems} problem${problems === 1 ? '' : 's'} for ${rules} (${count} ${label})\n`);
      for (const problem of document.problems)
        io.stdout.write(
          `  ${problem.file}${problem.line === undefined ? '' : `:${problem.line}`}  damaged: ${problem.why}\n`,
        );
      for (const violation of violations) {
        io.stdout.write(
          `  ${label}[${violation.index}]  ${violation.rule}${violation.toolCallId === undefined ? '' : ` (${violation.toolCallId})`}: ${violation.message}\n`,
        );
      }
    }
    if (values['json'] === true) io.stdout.write(`${JSON.stringify({ files })}\n`);
    return exit;
  },
};
