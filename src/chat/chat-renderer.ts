import type { AgentEvent } from '../agent/index.js';
import type { Change } from '../core/index.js';
import { compactionLine } from './compaction-lines.js';
import type { MarkdownStream } from './markdown-stream.js';
import type { Spinner } from './spinner.js';
import type { TerminalStyle } from './terminal-style.js';

export interface Writer {
  write(text: string): unknown;
}

export interface ChatRenderer {
  /** Shows the spinner until the next thing to print arrives. */
  waiting(label?: string): void;
  /** Stops the spinner, e.g. before asking a question. */
  pause(): void;
  /** While a question waits for its answer, lines are kept back (and the spinner stays off); `release` prints them. */
  hold(): void;
  release(): void;
  handle(event: AgentEvent): void;
  /** A line of the chat's own (not the model's), such as a command's answer. */
  note(text: string): void;
  /** The tool results of the last block, whole, for `/output`. */
  lastOutputs(): { name: string; result: string }[];
}

/** How much of each tool result is shown under its call: a preview (first and last lines), all of it, or none. */
export type OutputShown = 'preview' | 'full' | 'none';

/**
 * Draws a turn as it happens: the answer streams to `answer`; reasoning (dimmed), tool calls,
 * retries, repairs and errors go to `notes`. Interactive chat passes stdout for both; one-shot
 * keeps stdout for the answer alone.
 */
export function createChatRenderer(options: {
  answer: Writer;
  notes: Writer;
  style: TerminalStyle;
  spinner: Spinner;
  reasoning: boolean;
  fancy: boolean;
  output?: OutputShown;
  terminal?: boolean;
  moreHint?: string;
  markdown?: MarkdownStream;
}): ChatRenderer {
  const { answer, notes, style, spinner, fancy } = options;
  // On a terminal the model's own text is shown with its control characters made visible: an
  // answer must not move the cursor, rewrite lines (a bare CR) or set the window title.
  const shownText =
    options.terminal === true ? (text: string): string => visibleKeepingLines(text) : (text: string): string => text;
  const shown = options.output ?? 'preview';
  let outputs: { name: string; result: string }[] = [];
  let blockOpen = false;
  let mode: 'idle' | 'text' | 'reasoning' = 'idle';
  let answerAtLineStart = true;
  let notesAtLineStart = true;
  const shared = answer === notes;
  /** Tool calls started and not yet ended, by id: the spinner says which are still running. */
  const running = new Map<string, string>();
  let held: (() => void)[] | undefined;
  const later = (work: () => void): boolean => {
    if (held === undefined) return false;
    held.push(work);
    return true;
  };
  const spin = (label: string): void => {
    if (held === undefined) spinner.start(label);
  };
  const afterTools = (): void => {
    spin(running.size === 0 ? 'waiting for the model' : `running ${[...new Set(running.values())].join(', ')}`);
  };

  const endBlock = (): void => {
    spinner.stop();
    if (mode === 'text') options.markdown?.flush();
    if (mode === 'text' && !answerAtLineStart) {
      answer.write('\n');
      answerAtLineStart = true;
      if (shared) notesAtLineStart = true;
    }
    if (mode === 'reasoning' && !notesAtLineStart) {
      notes.write('\n');
      notesAtLineStart = true;
    }
    mode = 'idle';
  };
  const line = (text: string): void => {
    if (later(() => line(text))) return;
    endBlock();
    notes.write(`${text}\n`);
    notesAtLineStart = true;
    if (shared) answerAtLineStart = true;
  };

  return {
    waiting(label = 'waiting for the model') {
      if (mode === 'idle') spin(label);
    },
    pause() {
      spinner.stop();
    },
    hold() {
      spinner.stop();
      held ??= [];
    },
    release() {
      const queued = held ?? [];
      held = undefined;
      for (const work of queued) work();
      if (mode === 'idle') afterTools();
    },
    note(text) {
      line(text);
    },
    lastOutputs() {
      return outputs;
    },
    handle(event) {
      switch (event.type) {
        case 'text-delta': {
          if (event.text === '') return;
          if (mode !== 'text') endBlock();
          mode = 'text';
          if (options.markdown !== undefined) {
            // Drawn a finished block at a time; each drawn block ends its line.
            options.markdown.push(shownText(event.text));
            answerAtLineStart = true;
            if (shared) notesAtLineStart = true;
            return;
          }
          answer.write(shownText(event.text));
          answerAtLineStart = event.text.endsWith('\n');
          if (shared) notesAtLineStart = answerAtLineStart;
          return;
        }
        case 'reasoning-delta': {
          if (!options.reasoning || event.text === '') return;
          if (mode !== 'reasoning') {
            endBlock();
            if (!style.enabled) notes.write('thinking: ');
          }
          mode = 'reasoning';
          notes.write(style.dim(shownText(event.text)));
          notesAtLineStart = event.text.endsWith('\n');
          if (shared) answerAtLineStart = notesAtLineStart;
          return;
        }
        case 'tool-call-start':
          if (!blockOpen) outputs = [];
          blockOpen = true;
          running.set(event.id, event.name);
          line(
            style.cyan(
              `${fancy ? '⚙' : '[tool]'} ${visible(event.name)} ${summarizeArguments(event.arguments)}`.trimEnd(),
            ),
          );
          afterTools();
          return;
        case 'tool-call-end': {
          running.delete(event.id);
          if (running.size === 0) blockOpen = false;
          outputs.push({ name: event.name, result: event.result });
          const first = firstLine(event.result);
          if (event.isError) line(style.red(`  ${fancy ? '✗' : '[failed]'} ${visible(event.name)}: ${first}`));
          else line(style.dim(`  ${fancy ? '✓' : '[done]'} ${visible(event.name)}: ${describeResult(event.result)}`));
          if (shown !== 'none' && event.result.includes('\n')) {
            for (const text of previewOutput(
              event.result,
              shown === 'full' ? Infinity : PREVIEW_HEAD,
              shown === 'full' ? 0 : PREVIEW_TAIL,
              options.moreHint,
            ))
              line(style.dim(`    ${fancy ? '│' : '|'} ${text}`));
          }
          afterTools();
          return;
        }
        case 'retry':
          line(
            style.yellow(
              `retrying in ${(event.delayMs / 1000).toFixed(1)} s (attempt ${event.attempt}): ${visible(event.reason)}`,
            ),
          );
          spin('waiting for the model');
          return;
        case 'repair':
          for (const text of describeChanges('repaired the history before sending', event.changes))
            line(style.yellow(text));
          return;
        case 'compact':
          line(
            style.dim(
              `(${event.omittedMessages} older messages left out of this request to fit the context window, about ${event.estimatedTokens} tokens sent)`,
            ),
          );
          spin('waiting for the model');
          return;
        case 'compaction-start':
        case 'compaction-end':
        case 'compaction-failed':
          line(compactionLine(event, style));
          if (event.type === 'compaction-start') spin('summarizing the older turns');
          return;
        case 'error':
          // Provider error bodies and model-made names end up here: shown, never obeyed.
          line(style.red(`error: ${visible(event.message)}`));
          return;
        case 'turn-end':
          running.clear();
          endBlock();
          if (event.reason === 'aborted') line(style.yellow('(turn aborted; the session is kept)'));
          return;
      }
    },
  };
}

/** One line per change, at most `limit` of them, under a heading that counts them. */
export function describeChanges(heading: string, changes: readonly Change[], limit = 8): string[] {
  if (changes.length === 0) return [];
  const lines = [`${heading}: ${changes.length} change${changes.length === 1 ? '' : 's'}`];
  for (const change of changes.slice(0, limit))
    lines.push(`  - message ${change.index}: ${change.kind}: ${visible(change.detail)}`);
  if (changes.length > limit) lines.push(`  - ... and ${changes.length - limit} more`);
  return lines;
}

/** `path=notes.md offset=2`, or the raw text cut short when it is not a JSON object. */
export function summarizeArguments(text: string, limit = 120): string {
  let summary = text;
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
      summary = Object.entries(parsed as Record<string, unknown>)
        .map(
          ([key, value]) =>
            `${key}=${clip(typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? ''), 60)}`,
        )
        .join(' ');
    }
  } catch {
    // Not JSON: shown as it is.
  }
  return clip(visible(summary.replace(/\s+/g, ' ')), limit);
}

const PREVIEW_HEAD = 4;
const PREVIEW_TAIL = 2;
const PREVIEW_WIDTH = 160;

/**
 * The lines of a tool result shown under its call: the first `head` and the last `tail`, with a
 * line saying how many are left out, each cut to a terminal width. Control characters are made
 * visible: a file or a command's output must not be able to drive the terminal (escape sequences).
 */
export function previewOutput(
  result: string,
  head: number,
  tail: number,
  moreHint = '/output shows them all',
): string[] {
  const lines = result.replace(/\n$/, '').split('\n');
  const pick =
    lines.length <= head + tail + 1
      ? lines
      : [
          ...lines.slice(0, head),
          `... ${lines.length - head - tail} more lines (${moreHint})`,
          ...lines.slice(lines.length - tail),
        ];
  return pick.map((text) => clip(visible(text), PREVIEW_WIDTH));
}

/**
 * C0 and C1 controls (and DEL) as `\xNN`, tabs as spaces, and the characters that reorder or hide
 * text on screen (bidirectional overrides and isolates, zero-width marks: the "Trojan Source"
 * trick, CVE-2021-42574) as `\u{NNNN}`, so a command or a path reads as what it is.
 */
export function visible(text: string): string {
  return (
    text
      .replace(/\t/g, '  ')
      // eslint-disable-next-line no-control-regex
      .replace(/[\u0000-\u001f\u007f-\u009f]/g, (char) => `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}`)
      .replace(REORDERING, (char) => `\\u{${char.charCodeAt(0).toString(16)}}`)
  );
}

/** Bidi embeddings, overrides, isolates and marks; the zero-width space and word joiner; the BOM (ZWJ/ZWNJ stay: emoji and scripts need them). */
export const REORDERING = /[\u061c\u200b\u200e\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]/g;

/** `visible`, but newlines and tabs kept, and CRLF read as a newline. */
function visibleKeepingLines(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text
    .replace(/\r\n/g, '\n')
    .replace(
      /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g,
      (char) => `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}`,
    );
}

function describeResult(result: string): string {
  const lines = result === '' ? 0 : result.split('\n').length;
  return lines <= 1 ? clip(visible(result), 80) : `${lines} lines`;
}

function firstLine(text: string): string {
  return clip(visible(text.split('\n')[0] ?? ''), 200);
}

function clip(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit - 3)}...`;
}
