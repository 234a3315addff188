import { ERROR_PATTERNS } from './error-patterns.js';
import type { RuleId } from './rule-ids.js';

export interface ErrorClassification {
  rule: RuleId;
  /** The catalogue provider whose wording matched. */
  provider: string;
  /** The innermost error text, after unwrapping gateways. */
  text: string;
}

// Wrappers gateways put around a provider's text (CATALOGUE.md, "Wrappers to strip before matching").
const PREFIXES = [
  /^litellm\.\w+:\s*\w+Exception\s*-\s*/,
  /^<\d{3}>\s*InternalError\.Algo\.InvalidParameter:\s*/,
  /^An error occurred \(ValidationException\) when calling the \w+ operation:\s*/,
  /^API Error:\s*\d{3}\s*/,
  /^Error code:\s*\d{3}\s*-\s*/,
];

/**
 * Which rule a provider's error response refers to, or undefined. `body` is the response body as
 * text or parsed JSON; LiteLLM, OpenRouter (`error.metadata.raw`), Vertex (JSON inside
 * `error.message`), DashScope's `<400> ...` prefix and similar wrappers are unwrapped first.
 */
export function classifyError(status: number, body: unknown): ErrorClassification | undefined {
  if (status < 400 || status === 401 || status === 403 || status === 404 || status === 429) return undefined;
  const texts: string[] = [];
  collectTexts(body, texts, 0);
  for (const text of texts) {
    for (const candidate of [text, strip(text)]) {
      for (const entry of ERROR_PATTERNS) {
        if (entry.pattern.test(candidate)) return { rule: entry.rule, provider: entry.provider, text };
      }
    }
  }
  return undefined;
}

function strip(text: string): string {
  let result = text.trim();
  for (const prefix of PREFIXES) result = result.replace(prefix, '');
  return result;
}

/** Innermost texts first: a wrapper's own words ("Provider returned error") must not win over what it wraps. */
function collectTexts(value: unknown, texts: string[], depth: number): void {
  if (depth > 6 || value === null || value === undefined) return;
  if (typeof value === 'string') {
    const trimmed = value.trim();
    if ((trimmed.startsWith('{') || trimmed.startsWith('[')) && trimmed.length < 1_000_000) {
      try {
        collectTexts(JSON.parse(trimmed), texts, depth + 1);
      } catch {
        // not JSON after all: the text itself is the message
      }
    }
    // A JSON body embedded after a prefix: "litellm.BadRequestError: ... - {...}"
    const brace = trimmed.indexOf('{');
    if (brace > 0 && trimmed.endsWith('}')) {
      try {
        collectTexts(JSON.parse(trimmed.slice(brace)), texts, depth + 1);
      } catch {
        // the prefix text is still matched below
      }
    }
    texts.push(trimmed);
    return;
  }
  if (Array.isArray(value)) {
    for (const item of value) collectTexts(item, texts, depth + 1);
    return;
  }
  if (typeof value !== 'object') return;
  const record = value as Record<string, unknown>;
  const error = record['error'];
  if (error !== null && typeof error === 'object') {
    const inner = error as Record<string, unknown>;
    const metadata = inner['metadata'];
    if (metadata !== null && typeof metadata === 'object')
      collectTexts((metadata as Record<string, unknown>)['raw'], texts, depth + 1);
    collectTexts(inner['message'], texts, depth + 1);
    collectTexts(inner['error'], texts, depth + 1);
  } else {
    collectTexts(error, texts, depth + 1);
  }
  collectTexts(record['message'], texts, depth + 1);
  collectTexts(record['detail'], texts, depth + 1);
}
