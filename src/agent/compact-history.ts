import type { Message, ProfileName } from '../core/index.js';
import { textOf } from '../core/index.js';
import { createTokenEstimator } from '../core/token-estimate.js';
import { trim } from '../core/trim.js';

/**
 * Compaction by summary: the pieces the runner composes (see docs/decisions/agent-compaction.md).
 * The summary is recorded in the history as a user/assistant pair placed where the summarized turns
 * end: every message stays in the session, and a request carries the lead, the newest summary pair
 * and what follows it. A user/assistant pair is what every provider accepts mid-history (a system
 * note is rejected where system messages may only lead, and a bare user message breaks alternation).
 */
export const SUMMARY_MARKER = '[unstuck: summary of the earlier conversation]';
const ACKNOWLEDGEMENT = 'Understood: I have the summary of the earlier conversation and continue from it.';

export interface CompactionOptions {
  /** Compact when what a request would carry passes this fraction of the window's budget. Default: per profile (0.75, or 0.6 for a local model). */
  threshold?: number;
  /** After compaction, the newest turns kept verbatim take at most this fraction of the budget. Default 0.4. */
  keep?: number;
  /** A tool result is cut to this many characters in what the summarizer reads. Default 2000. */
  maxResultChars?: number;
}

const THRESHOLD: Partial<Record<ProfileName, number>> = { local: 0.6 };
const DEFAULT_THRESHOLD = 0.75;
const DEFAULT_KEEP = 0.4;
const DEFAULT_RESULT_CHARS = 2000;

/**
 * Context windows, in tokens, of the models each profile usually serves, for when the caller does
 * not name one: DeepSeek V3.x and the OpenAI-compatible hosts' current models take 128k, Claude
 * 200k; a local model is assumed small.
 */
const WINDOWS: Record<ProfileName, number> = {
  openai: 128_000,
  deepseek: 128_000,
  qwen: 128_000,
  mistral: 128_000,
  moonshot: 128_000,
  groq: 128_000,
  anthropic: 200_000,
  local: 32_768,
};

export function defaultContextWindow(profile: ProfileName): number {
  return WINDOWS[profile];
}

export function compactionThreshold(profile: ProfileName, options: CompactionOptions | undefined): number {
  return options?.threshold ?? THRESHOLD[profile] ?? DEFAULT_THRESHOLD;
}

export function isSummaryMessage(message: Message | undefined): boolean {
  return message?.role === 'user' && typeof message.content === 'string' && message.content.startsWith(SUMMARY_MARKER);
}

/** Index of the newest summary pair in the history, -1 when it was never compacted. */
export function summaryIndex(history: readonly Message[]): number {
  for (let index = history.length - 2; index >= 0; index -= 1) {
    if (isSummaryMessage(history[index]) && history[index + 1]?.role === 'assistant') return index;
  }
  return -1;
}

function leadLength(history: readonly Message[]): number {
  let lead = 0;
  while (lead < history.length && (history[lead]?.role === 'system' || history[lead]?.role === 'developer')) lead += 1;
  return lead;
}

/** What requests carry of the history: the leading system messages, then the newest summary pair and everything after it. */
export function compactedView(history: readonly Message[]): { messages: readonly Message[]; start: number } {
  const at = summaryIndex(history);
  const lead = leadLength(history);
  if (at < lead) return { messages: history, start: lead };
  return { messages: [...history.slice(0, lead), ...history.slice(at)], start: at };
}

export interface CompactionPlan {
  /** History index of the first message a request still carries verbatim (where the summary pair goes). */
  cut: number;
  /** History indices [from, cut) the summary covers (from = the previous summary pair, if any). */
  from: number;
  /** The previous summary's text, carried into the new one. */
  previous: string | undefined;
}

/**
 * Which turns to summarize: the oldest ones, keeping the newest whole turns that fit `keepTokens`
 * (the current turn always stays). `manual` (`/compact`) summarizes even when everything would fit,
 * keeping only the newest turn. Undefined when there is not one whole turn to summarize.
 */
export function planCompaction(
  history: readonly Message[],
  options: { keepTokens: number; charsPerToken: number; manual: boolean },
): CompactionPlan | undefined {
  const { messages: view, start } = compactedView(history);
  const lead = leadLength(history);
  const toHistory = (viewIndex: number): number => (view === history ? viewIndex : start + (viewIndex - lead));
  const summarized = view !== history;
  // The first turn of the view after the lead (a previous summary pair counts as part of the past).
  const firstTurn = summarized ? lead + 2 : lead;
  const turnStarts: number[] = [];
  for (let index = firstTurn; index < view.length; index += 1)
    if (view[index]?.role === 'user' && !isSummaryMessage(view[index])) turnStarts.push(index);
  const newest = turnStarts[turnStarts.length - 1];
  if (newest === undefined) return undefined;
  const kept = trim(view, {
    maxTokens: options.keepTokens,
    estimator: createTokenEstimator({ charsPerToken: options.charsPerToken }),
  });
  // The first message kept verbatim: trim's cut when it fell on a whole turn, else the newest turn's start.
  let cut = newest;
  const firstKept = kept.items[lead];
  if (kept.changed && firstKept !== undefined && firstKept.role === 'user' && !isSummaryMessage(firstKept)) {
    const viewIndex = lead + kept.omitted.length;
    if (view[viewIndex] === firstKept && kept.omitted.every((index, position) => index === lead + position))
      cut = viewIndex;
  } else if (!kept.changed && !options.manual) {
    return undefined;
  }
  if (cut <= firstTurn) return undefined;
  const previous = summarized ? summaryText(view[lead] as Message) : undefined;
  return { cut: toHistory(cut), from: summarized ? start : lead, previous };
}

function summaryText(message: Message): string {
  const text = textOf(message.content);
  const body = text.indexOf('\n\n');
  return body < 0 ? '' : text.slice(body + 2);
}

const SUMMARIZER = [
  'You compact a long conversation between a person and a coding agent, so that the agent can go on with only your summary in place of the older turns.',
  "Write a summary that keeps what the agent needs to continue: the person's goals, requests and constraints; decisions made and why; files, commands and tools used and what they showed; errors met and how they were solved; what is done and what remains to do.",
  'Be concise and concrete (names, paths, numbers). Plain prose and short lists; no preamble, and do not address the person.',
].join(' ');

/**
 * The conversation as plain text for the summarizer, cut into chunks of at most `chunkChars`
 * characters at message boundaries. Plain text (not the messages themselves) makes the request
 * valid for every provider whatever the history holds, and lets long results be cut short.
 */
export function transcriptChunks(
  messages: readonly Message[],
  options: { chunkChars: number; maxResultChars: number },
): string[] {
  const names = new Map<string, string>();
  const chunks: string[] = [];
  let current = '';
  const limit = Math.max(200, options.chunkChars);
  for (const message of messages) {
    let line = renderMessage(message, names, options.maxResultChars);
    if (line === '') continue;
    if (line.length > limit) line = `${line.slice(0, limit - 40)}\n[... cut: ${line.length - limit + 40} characters]`;
    if (current !== '' && current.length + line.length + 2 > limit) {
      chunks.push(current);
      current = '';
    }
    current = current === '' ? line : `${current}\n\n${line}`;
  }
  if (current !== '') chunks.push(current);
  return chunks;
}

function renderMessage(message: Message, names: Map<string, string>, maxResultChars: number): string {
  const text = textOf(message.content).trim();
  switch (message.role) {
    case 'user':
      return isSummaryMessage(message) ? '' : `## person\n${text}`;
    case 'assistant': {
      const parts: string[] = [];
      if (text !== '') parts.push(text);
      for (const call of message.tool_calls ?? []) {
        const name = call.function?.name ?? 'tool';
        if (typeof call.id === 'string') names.set(call.id, name);
        parts.push(`(called ${name} ${cut(call.function?.arguments ?? '', 400)})`);
      }
      return parts.length === 0 ? '' : `## agent\n${parts.join('\n')}`;
    }
    case 'tool':
      return `## result of ${names.get(message.tool_call_id ?? '') ?? 'a tool'}\n${cut(text, maxResultChars)}`;
    case 'system':
      return text === '' ? '' : `## note\n${cut(text, maxResultChars)}`;
    default:
      return '';
  }
}

function cut(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit)} [... ${text.length - limit} more characters]`;
}

/** The messages of one summarizing request: the instructions, then the earlier summary and the next part of the conversation. */
export function summaryRequestMessages(
  previous: string | undefined,
  chunk: string,
  position: { part: number; parts: number },
): Message[] {
  const intro =
    previous === undefined || previous === '' ? '' : `Summary of the conversation so far:\n\n${previous}\n\n---\n\n`;
  const which = position.parts > 1 ? ` (part ${position.part} of ${position.parts})` : '';
  return [
    { role: 'system', content: SUMMARIZER },
    {
      role: 'user',
      content: `${intro}The conversation to summarize${previous === undefined || previous === '' ? '' : ' next'}${which}:\n\n${chunk}\n\n---\n\nWrite the summary of everything above, as one text that replaces it.`,
    },
  ];
}

/** The pair recorded in the history where the summarized turns end. */
export function summaryPair(summary: string, covered: { from: number; to: number }, thinking: boolean): Message[] {
  const note = `${SUMMARY_MARKER} Messages ${covered.from + 1} to ${covered.to} of this session were compacted into this summary; the session file keeps them all.`;
  const acknowledgement: Message = { role: 'assistant', content: ACKNOWLEDGEMENT };
  if (thinking) acknowledgement.reasoning_content = '';
  return [{ role: 'user', content: `${note}\n\n${summary.trim()}` }, acknowledgement];
}

export const COMPACTION_DEFAULTS = { keep: DEFAULT_KEEP, maxResultChars: DEFAULT_RESULT_CHARS };
