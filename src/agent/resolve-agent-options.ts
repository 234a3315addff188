import { setTimeout as delay } from 'node:timers/promises';
import type { ProfileName } from '../core/index.js';
import { getProfile } from '../core/index.js';
import type { SessionStore } from '../session/index.js';
import { createMemoryStore } from '../session/index.js';
import type { CompactionOptions } from './compact-history.js';
import { compactionThreshold, defaultContextWindow } from './compact-history.js';
import type { RequestPath } from './request-completion.js';
import type { AgentOptions, Tool } from './types.js';

export const AGENT_DEFAULTS = {
  maxRetries: 4,
  baseDelayMs: 500,
  maxDelayMs: 20_000,
  idleTimeoutMs: 120_000,
  maxSteps: 64,
  hintAfterFailures: 3,
};

/** A tool as the request offers it: the OpenAI function shape. */
export interface WireTool {
  type: 'function';
  function: { name: string; description: string; parameters: object };
}

/** Everything the runner needs, every default filled in: the parts read this, never `AgentOptions`. */
export interface AgentConfig {
  model: string;
  profile: ProfileName;
  /** Thinking mode as the history keeps it (reasoning_content on every assistant message). */
  thinking: boolean;
  /** DeepSeek's `thinking` request field: sent only when the caller chose a mode. */
  thinkingField: { type: 'enabled' | 'disabled' } | undefined;
  stream: boolean;
  systemPrompt: string | undefined;
  /** Where a system message may only come first (Anthropic, local chat templates). */
  systemFirstOnly: boolean;
  /** The role of a loop-breaking hint: a user message where a system message may only come first. */
  hintRole: 'system' | 'user';
  tools: ReadonlyMap<string, Tool>;
  /** The tools as each turn's request offers them; undefined when there are none. */
  wireTools: readonly WireTool[] | undefined;
  /** Characters every turn's request carries besides the history: the system prompt and the tools. */
  fixedChars: number;
  /** The option `session`: where the history is saved. */
  store: SessionStore;
  request: RequestPath;
  maxSteps: number;
  hintAfterFailures: number;
  /** The model's window in tokens: the caller's, or the profile's usual one (compaction on demand needs one). */
  contextWindow: number;
  /** Tokens kept free for the answer. */
  reserveTokens: number;
  /** Whether the caller named a window: only then are requests cut to it and the estimate calibrated. */
  fitToWindow: boolean;
  compaction: {
    /** Compaction before a request of a turn: only with a window named and compaction not turned off. */
    auto: boolean;
    threshold: number;
    options: CompactionOptions;
  };
}

/** Turns the caller's options into the runner's configuration: every default is decided here, once. */
export function resolveAgentOptions(options: AgentOptions): AgentConfig {
  const profile = options.profile ?? 'openai';
  const thinking = options.thinking ?? getProfile(profile).thinkingByDefault(options.model);
  const tools = new Map<string, Tool>((options.tools ?? []).map((tool) => [tool.name, tool]));
  const wireTools =
    tools.size === 0
      ? undefined
      : [...tools.values()].map(
          (tool): WireTool => ({
            type: 'function',
            function: { name: tool.name, description: tool.description, parameters: tool.parameters },
          }),
        );
  const systemFirstOnly = getProfile(profile).rules.some((rule) => rule.id === 'system-message-position');
  const contextWindow = options.contextWindow ?? defaultContextWindow(profile);
  const compaction = options.compaction === false ? undefined : options.compaction;
  return {
    model: options.model,
    profile,
    thinking,
    thinkingField:
      profile === 'deepseek' && options.thinking !== undefined
        ? { type: thinking ? 'enabled' : 'disabled' }
        : undefined,
    stream: options.stream ?? true,
    systemPrompt: options.systemPrompt,
    systemFirstOnly,
    hintRole: systemFirstOnly ? 'user' : 'system',
    tools,
    wireTools,
    fixedChars: (options.systemPrompt?.length ?? 0) + (wireTools === undefined ? 0 : JSON.stringify(wireTools).length),
    store: options.session ?? createMemoryStore(),
    request: {
      url: `${options.baseURL.replace(/\/+$/, '')}/chat/completions`,
      apiKey: options.apiKey,
      fetch: options.fetch ?? globalThis.fetch,
      idleTimeoutMs: options.idleTimeoutMs ?? AGENT_DEFAULTS.idleTimeoutMs,
      retry: {
        maxRetries: options.retry?.maxRetries ?? AGENT_DEFAULTS.maxRetries,
        baseDelayMs: options.retry?.baseDelayMs ?? AGENT_DEFAULTS.baseDelayMs,
        maxDelayMs: options.retry?.maxDelayMs ?? AGENT_DEFAULTS.maxDelayMs,
      },
      // The default pause between retries: Node's own timer, which an abort cuts short.
      sleep: options.sleep ?? ((ms: number, signal: AbortSignal) => delay(ms, undefined, { signal })),
    },
    maxSteps: options.maxSteps ?? AGENT_DEFAULTS.maxSteps,
    hintAfterFailures: options.hintAfterFailures ?? AGENT_DEFAULTS.hintAfterFailures,
    contextWindow,
    reserveTokens: options.reserveTokens ?? Math.min(8192, Math.floor(contextWindow / 4)),
    fitToWindow: options.contextWindow !== undefined,
    compaction: {
      auto: options.contextWindow !== undefined && options.compaction !== false,
      threshold: compactionThreshold(profile, compaction),
      options: compaction ?? {},
    },
  };
}
