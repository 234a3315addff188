import type { ProfileName } from './profile.js';

/**
 * Serialized characters per token, by profile: what a history's JSON costs in the provider's
 * tokenizer. Deliberately low (a token estimate that runs high only trims a little early): the
 * JSON of a tool-calling history is about 3.5-4.5 characters per token on OpenAI's and Anthropic's
 * tokenizers, and nearer 3 on tokenizers trained for Chinese text (DeepSeek, Qwen, Kimi), whose
 * histories often mix it in. A caller's own `usage.prompt_tokens` corrects it (`calibrate`).
 */
const CHARS_PER_TOKEN: Record<ProfileName, number> = {
  openai: 3.5,
  groq: 3.5,
  mistral: 3.5,
  anthropic: 3.5,
  deepseek: 3,
  qwen: 3,
  moonshot: 3,
  local: 3,
};

/** Bounds on a calibrated ratio: a `usage` from a different request (or none) must not make the estimate absurd. */
const MIN_RATIO = 1;
const MAX_RATIO = 8;

export interface TokenEstimator {
  /** Characters per token now: the profile's default until `calibrate` learns the real one. */
  readonly charsPerToken: number;
  /** Serialized characters of a value (about its JSON length; no serialization is done). */
  chars(value: unknown): number;
  /** Estimated tokens of a value. */
  tokens(value: unknown): number;
  /** Estimated tokens of a count of serialized characters. */
  tokensOf(chars: number): number;
  /**
   * Learns the ratio from what a request really cost: `sentChars` is `chars` of everything the
   * request carried (messages, and the system prompt and tools if you count them), `promptTokens`
   * the `usage.prompt_tokens` the provider reported for it. Ignored when either is not positive.
   */
  calibrate(sentChars: number, promptTokens: number): void;
}

export interface TokenEstimatorOptions {
  profile?: ProfileName;
  /** Start from this ratio instead of the profile's. */
  charsPerToken?: number;
}

/** A token estimate for one provider, calibrated from `usage` as requests are answered. */
export function createTokenEstimator(options: TokenEstimatorOptions = {}): TokenEstimator {
  let ratio = clamp(options.charsPerToken ?? CHARS_PER_TOKEN[options.profile ?? 'openai'] ?? 3);
  return {
    get charsPerToken() {
      return ratio;
    },
    chars: serializedChars,
    tokens: (value) => Math.ceil(serializedChars(value) / ratio),
    tokensOf: (chars) => Math.ceil(chars / ratio),
    calibrate(sentChars, promptTokens) {
      if (!(sentChars > 0) || !(promptTokens > 0)) return;
      ratio = clamp(sentChars / promptTokens);
    },
  };
}

function clamp(ratio: number): number {
  return Number.isFinite(ratio) ? Math.min(MAX_RATIO, Math.max(MIN_RATIO, ratio)) : 3;
}

/**
 * About the length of `JSON.stringify(value)`, found by walking the value: string lengths (plus
 * their quotes), keys, separators. Escapes are not counted (they are rare and the ratio absorbs
 * them). Linear in the size of the value and allocates nothing, which is why it is not stringify.
 */
export function serializedChars(value: unknown): number {
  switch (typeof value) {
    case 'string':
      return value.length + 2;
    case 'number':
      return 4;
    case 'boolean':
      return 5;
    case 'object': {
      if (value === null) return 4;
      if (Array.isArray(value)) {
        let total = 2;
        for (const item of value) total += serializedChars(item) + 1;
        return total;
      }
      let total = 2;
      for (const key in value) {
        const field = (value as Record<string, unknown>)[key];
        if (field === undefined) continue;
        total += key.length + 4 + serializedChars(field);
      }
      return total;
    }
    default:
      return 0;
  }
}
