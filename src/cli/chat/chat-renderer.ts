import type { AgentEvent, ChangeLike } from './agent-port.js';
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
}

/**
 * Draws a turn as it happens: the answer streams to `answer`; reasoning (dimmed), tool calls,
 * retries, repairs and errors go to `notes`. Interactive chat passes stdout for both; one-shot
 * keeps stdout for the answer alone.
 */
export function createChatRenderer(options: { answer: Writer; notes: Writer; style: TerminalStyle; spinner: Spinner; reasoning: boolean; fancy: boolean; markdown?: MarkdownStream }): ChatRenderer {
  const { answer, notes, style, spinner, fancy } = options;
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
    handle(event) {
      switch (event.type) {
        case 'text-delta': {
          if (event.text === '') return;
          if (mode !== 'text') endBlock();
          mode = 'text';
          if (options.markdown !== undefined) {
            // Drawn a finished block at a time; each drawn block ends its line.
            options.markdown.push(event.text);
            answerAtLineStart = true;
            if (shared) notesAtLineStart = true;
            return;
          }
          answer.write(event.text);
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
          notes.write(style.dim(event.text));
          notesAtLineStart = event.text.endsWith('\n');
          if (shared) answerAtLineStart = notesAtLineStart;
          return;
        }
        case 'tool-call-start':
          running.set(event.id, event.name);
          line(style.cyan(`${fancy ? '⚙' : '[tool]'} ${event.name} ${summarizeArguments(event.arguments)}`.trimEnd()));
          afterTools();
          return;
        case 'tool-call-end': {
          running.delete(event.id);
          const first = firstLine(event.result);
          if (event.isError) line(style.red(`  ${fancy ? '✗' : '[failed]'} ${event.name}: ${first}`));
          else line(style.dim(`  ${fancy ? '✓' : '[done]'} ${event.name}: ${describeResult(event.result)}`));
          afterTools();
          return;
        }
        case 'retry':
          line(style.yellow(`retrying in ${(event.delayMs / 1000).toFixed(1)} s (attempt ${event.attempt}): ${event.reason}`));
          spin('waiting for the model');
          return;
        case 'repair':
          for (const text of describeChanges('repaired the history before sending', event.changes)) line(style.yellow(text));
          return;
        case 'compact':
          line(style.dim(`(${event.omittedMessages} older messages left out of this request to fit the context window, about ${event.estimatedTokens} tokens sent)`));
          spin('waiting for the model');
          return;
        case 'compaction-start':
        case 'compaction-end':
        case 'compaction-failed':
          line(compactionLine(event, style));
          if (event.type === 'compaction-start') spin('summarizing the older turns');
          return;
        case 'error':
          line(style.red(`error: ${event.message}`));
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
export function describeChanges(heading: string, changes: readonly ChangeLike[], limit = 8): string[] {
  if (changes.length === 0) return [];
  const lines = [`${heading}: ${changes.length} change${changes.length === 1 ? '' : 's'}`];
  for (const change of changes.slice(0, limit)) lines.push(`  - message ${change.index}: ${change.kind}: ${change.detail}`);
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
        .map(([key, value]) => `${key}=${clip(typeof value === 'string' ? JSON.stringify(value) : JSON.stringify(value) ?? '', 60)}`)
        .join(' ');
    }
  } catch {
    // Not JSON: shown as it is.
  }
  return clip(summary.replace(/\s+/g, ' '), limit);
}

function describeResult(result: string): string {
  const lines = result === '' ? 0 : result.split('\n').length;
  return lines <= 1 ? clip(result, 80) : `${lines} lines`;
}

function firstLine(text: string): string {
  return clip(text.split('\n')[0] ?? '', 200);
}

function clip(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit - 3)}...`;
}
