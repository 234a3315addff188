import { Buffer } from 'node:buffer';
import type { CheckOptions, FormatName, ProfileName } from '../../core/index.js';
import { check } from '../../core/index.js';
import type { ProxyRepairEvent, WireName } from '../../http/index.js';
import { writeFileAtomic } from '../../session/atomic-write.js';
import { isRecord } from '../sessions/align-repaired.js';
import type { ReportEntry } from './render-repair-report.js';
import { renderRepairReport } from './render-repair-report.js';

/** The most repaired requests a run's report keeps whole; the rest are counted, not shown. */
export const MAX_REPORTED_REQUESTS = 50;
/** The most history (JSON characters, before the repair) the kept requests may hold together. */
export const MAX_REPORTED_CHARS = 64 * 1024 * 1024;

const FORMATS: Record<WireName, FormatName> = {
  chat: 'openai-chat',
  anthropic: 'anthropic-messages',
  responses: 'responses-input',
  gemini: 'gemini-contents',
};

interface Kept {
  event: ProxyRepairEvent;
  at: number;
}

export interface RunRepairReport {
  /** Keeps the event, while under the bounds; otherwise counts it. */
  add(event: ProxyRepairEvent): void;
  /** How many repairs were seen, kept or not. */
  readonly seen: number;
  /** Writes the page (atomically; readable by the user alone: it holds the conversation). */
  write(file: string): Promise<void>;
}

/**
 * What `unstuck run --report FILE` shows: each request the proxy repaired during the run, its
 * history before and after, what was wrong (the provider's wording), what was changed and, for
 * the retry after a provider's 400, what the provider answered. Memory is bounded: the first
 * MAX_REPORTED_REQUESTS repairs (and at most MAX_REPORTED_CHARS of history) are kept, and the page
 * says how many more there were. The events hold bodies only, never a header.
 */
export function createRunRepairReport(options: { profile?: ProfileName | undefined } = {}): RunRepairReport {
  const kept: Kept[] = [];
  let seen = 0;
  let chars = 0;
  return {
    get seen() {
      return seen;
    },
    add(event) {
      seen += 1;
      if (kept.length >= MAX_REPORTED_REQUESTS) return;
      const size = JSON.stringify(itemsOf(event.before) ?? []).length;
      if (chars + size > MAX_REPORTED_CHARS) return;
      chars += size;
      kept.push({ event, at: seen });
    },
    async write(file) {
      const entries = kept.map(({ event, at }) => entryOf(event, at, options.profile));
      const notes = [
        `${seen} repair${seen === 1 ? '' : 's'} of requests during this run (unstuck run); the history is repaired on the wire only, the saved session is as it was.`,
      ];
      if (kept.length < seen)
        notes.push(
          `Only the first ${kept.length} are shown (at most ${MAX_REPORTED_REQUESTS} requests and ${MAX_REPORTED_CHARS / 1024 / 1024} MiB of history are kept); ${seen - kept.length} more are not.`,
        );
      const html = renderRepairReport(entries, { title: 'unstuck run: repaired requests', notes });
      await writeFileAtomic(file, Buffer.from(html, 'utf8'), { mode: 0o600 });
    },
  };
}

function entryOf(event: ProxyRepairEvent, at: number, profile: ProfileName | undefined): ReportEntry {
  const format = FORMATS[event.wire];
  const input = itemsOf(event.before) ?? [];
  const output = itemsOf(event.after) ?? [];
  const entry: ReportEntry = {
    file: `#${at} ${event.path} (${event.attempt === 'heal' ? "retried after the provider's 400" : 'repaired before sending'})`,
    wire: format,
    label: format === 'gemini-contents' ? 'contents' : format === 'responses-input' ? 'input' : 'messages',
    input,
    output,
    before: violationsOf(event, input, format, profile),
    changes: event.changes,
    remaining: event.remaining,
    problems: [],
  };
  if (event.providerError !== undefined) entry.providerErrors = [event.providerError];
  return entry;
}

/** What the provider would have said of the history as it came: the request's own model and thinking decide some rules. */
function violationsOf(
  event: ProxyRepairEvent,
  items: readonly unknown[],
  format: FormatName,
  profile: ProfileName | undefined,
): ReportEntry['before'] {
  const options: CheckOptions = { format, scope: 'request' };
  if (format === 'openai-chat' && profile !== undefined) options.profile = profile;
  if (format === 'anthropic-messages') {
    if (typeof event.before['model'] === 'string') options.model = event.before['model'];
    const thinking = (event.before['thinking'] as { type?: unknown } | null | undefined)?.type;
    options.thinking = thinking === 'enabled' || thinking === 'adaptive';
  }
  try {
    return check(items, options);
  } catch {
    return [];
  }
}

/** The history a wire's body carries: messages, input, or contents (Gemini's possibly inside `generateContentRequest`). */
function itemsOf(body: Record<string, unknown>): unknown[] | undefined {
  for (const key of ['messages', 'input', 'contents']) if (Array.isArray(body[key])) return body[key] as unknown[];
  const inner = body['generateContentRequest'];
  return isRecord(inner) && Array.isArray(inner['contents']) ? (inner['contents'] as unknown[]) : undefined;
}
