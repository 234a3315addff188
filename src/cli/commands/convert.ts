import { Buffer } from 'node:buffer';
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { UnstuckError } from '../../core/errors.js';
import type { Message } from '../../core/messages.js';
import { writeFileAtomic } from '../../session/atomic-write.js';
import type { LoadResult } from '../../session/index.js';
import {
  createJournalStore,
  createTranscriptStore,
  formatJournal,
  formatTranscript,
  parseJournal,
  parseTranscript,
} from '../../session/index.js';
import type { Command } from '../command.js';
import { EXIT } from '../command.js';
import { readDocument } from '../documents.js';
import type { Io } from '../io.js';
import { readInputBytes } from '../read-input.js';
import { isStoreUrl, readStoreUrl, writeStoreUrl } from '../store-url.js';

type Format = 'json' | 'jsonl' | 'md';
const FORMATS: readonly Format[] = ['json', 'jsonl', 'md'];

/**
 * `unstuck convert IN OUT`: a history from one container to another, by extension — a JSON array
 * or request body (`.json`), a JSONL journal (`.jsonl`), a Markdown transcript (`.md`). `-` is
 * stdin or stdout, with `--from`/`--to` naming the format. Files are written atomically, through
 * the session stores (so a long transcript is split into segments like any saved session).
 * Anything the input could not read is listed on stderr, and the exit code is 1.
 */
export const convertCommand: Command = {
  name: 'convert',
  summary:
    'Convert a history between .json (array or request body), .jsonl and .md (session transcript). Exit 0 done, 1 input was damaged (listed), 2 bad input.',
  positionals: 'IN OUT',
  options: {
    from: { type: 'string' },
    to: { type: 'string' },
  },
  optionHelp: {
    from: 'Format of IN when it is - (stdin) or has another extension: json, jsonl, md',
    to: 'Format of OUT when it is - (stdout, default json) or has another extension: json, jsonl, md',
  },
  async run({ values, positionals }, io) {
    if (positionals.length !== 2) {
      io.stderr.write('unstuck convert: name IN and OUT (- for stdin/stdout)\n');
      return EXIT.usage;
    }
    const [input, output] = positionals as [string, string];
    const from = chooseFormat(input, values['from'], undefined);
    const to = chooseFormat(output, values['to'], output === '-' || isStoreUrl(output) ? 'json' : undefined);
    if (to === undefined)
      throw new UnstuckError('USAGE', `cannot tell the format of ${output} from its extension: use --to json|jsonl|md`);
    if (input !== '-' && output !== '-' && (await sameFile(input, output))) {
      throw new UnstuckError(
        'USAGE',
        `IN and OUT are the same file (${output}): convert would replace its input with no copy left; write to another file (fix --write repairs a file in place, keeping FILE.bak)`,
      );
    }
    const loaded = await readInput(input, from, io);
    for (const problem of loaded.problems) {
      io.stderr.write(
        `unstuck convert: ${problem.file}${problem.line === undefined ? '' : `:${problem.line}`}: ${problem.why}\n`,
      );
    }
    await writeOutput(output, to, loaded.messages, io);
    if (output !== '-')
      io.stderr.write(`unstuck convert: ${loaded.messages.length} messages written to ${output} (${to})\n`);
    return loaded.problems.length > 0 ? EXIT.violations : EXIT.ok;
  },
};

/** Whether two paths name one file: the same path, or (for files that exist) the same device and inode. */
async function sameFile(first: string, second: string): Promise<boolean> {
  if (resolve(first) === resolve(second)) return true;
  const [a, b] = await Promise.all([stat(first).catch(() => undefined), stat(second).catch(() => undefined)]);
  return a !== undefined && b !== undefined && a.dev === b.dev && a.ino === b.ino;
}

function chooseFormat(file: string, flag: unknown, fallback: Format | undefined): Format | undefined {
  if (typeof flag === 'string') {
    if (!(FORMATS as readonly string[]).includes(flag))
      throw new UnstuckError('USAGE', `unknown format '${flag}' (use json, jsonl or md)`);
    return flag as Format;
  }
  const extension = /\.(json|jsonl|md)$/i.exec(file)?.[1]?.toLowerCase();
  return (extension as Format | undefined) ?? fallback;
}

async function readInput(file: string, format: Format | undefined, io: Io): Promise<LoadResult> {
  if (isStoreUrl(file)) return readStoreUrl(file, io);
  if (file === '-' && (format === 'md' || format === 'jsonl')) {
    const text = (await readInputBytes('-', io)).toString('utf8');
    return format === 'md' ? parseTranscript(text, { file: '<stdin>' }) : parseJournal(text, { file: '<stdin>' });
  }
  if (file !== '-' && format === 'md') {
    // Refused before the store reads it, as readDocument refuses: a FIFO, a device, too large.
    await readInputBytes(file, io);
    return createTranscriptStore(file).load();
  }
  const document = await readDocument(file, io);
  return { messages: document.messages, problems: document.problems };
}

async function writeOutput(file: string, format: Format, messages: readonly Message[], io: Io): Promise<void> {
  if (isStoreUrl(file)) return writeStoreUrl(file, io, messages);
  if (file === '-') {
    io.stdout.write(
      format === 'md'
        ? formatTranscript(messages)
        : format === 'jsonl'
          ? formatJournal(messages)
          : `${JSON.stringify(messages, null, 2)}\n`,
    );
    return;
  }
  if (format === 'json') {
    await writeFileAtomic(file, Buffer.from(`${JSON.stringify(messages, null, 2)}\n`, 'utf8'));
    return;
  }
  const store = format === 'md' ? createTranscriptStore(file) : createJournalStore(file);
  try {
    await store.save(messages);
  } finally {
    await store.close();
  }
}
