import { basename } from 'node:path';
import { OPENCODE_DEFAULT_PROVIDERS, opencodeInlineConfig, readOpencodeBaseUrls } from './opencode-config.js';

/** A base-URL variable an agent honours, and where its requests go when it was not set. */
export interface BaseUrlVariable {
  name: string;
  /** The provider's own base URL, as the agent's SDK would use it with the variable unset. */
  providerDefault: string;
}

/** One base URL of the run: the agent's value before it (else the provider's default), and its name for messages. */
export interface PlannedBaseUrl extends BaseUrlVariable {
  previous: string | undefined;
}

/** How one run points the agent at the proxy: its base URLs, then, given the proxy URL of each, what the agent gets. */
export interface RunPlan {
  baseUrls: readonly PlannedBaseUrl[];
  /** Variables set for the agent (beside the rest of our environment). */
  environment(proxyUrls: readonly string[]): Record<string, string>;
  /** Arguments put before the user's own. */
  arguments(proxyUrls: readonly string[]): string[];
}

export interface AgentTarget {
  name: string;
  variables: readonly BaseUrlVariable[];
  /**
   * Extra arguments put before the user's own (a one-run config override), given the base URL of
   * the proxy for the variable of the same index; none for agents that read the environment.
   */
  arguments?: (proxyUrls: readonly string[]) => string[];
  /**
   * Whether the agent's base URLs may carry the run's token. False for an agent that can be pointed
   * only on its command line (Codex): every local user reads a command line in `ps`, so its proxy
   * admits the agent's connections by process instead (docs/decisions/cli-run-agent.md).
   */
  tokenInUrl?: boolean;
  /** Said on stderr before the run when the agent cannot be pointed at the proxy for one run. */
  note?: string;
  /** For an agent pointed otherwise than by its variables (OpenCode's inline config): its own plan. */
  plan?: (env: NodeJS.ProcessEnv, cwd: string) => RunPlan;
}

const ANTHROPIC: BaseUrlVariable = { name: 'ANTHROPIC_BASE_URL', providerDefault: 'https://api.anthropic.com' };
const OPENAI: BaseUrlVariable = { name: 'OPENAI_BASE_URL', providerDefault: 'https://api.openai.com/v1' };
const GEMINI: BaseUrlVariable = {
  name: 'GOOGLE_GEMINI_BASE_URL',
  providerDefault: 'https://generativelanguage.googleapis.com',
};

/**
 * The agents `unstuck run` knows by the basename of the command, and the variables each honours.
 * Claude Code reads ANTHROPIC_BASE_URL, Gemini CLI GOOGLE_GEMINI_BASE_URL, Qwen Code (and most
 * OpenAI-compatible tools) OPENAI_BASE_URL. Codex 0.171's built-in `openai` provider reads no
 * variable (OPENAI_BASE_URL is ignored: tested), only the `openai_base_url` config key, which `-c`
 * sets for one run without touching ~/.codex/config.toml; its previous value is still taken from
 * OPENAI_BASE_URL. OpenCode is pointed through OPENCODE_CONFIG_CONTENT, the inline config layer it
 * merges last over its config files (opencode-config.ts).
 */
export const AGENT_TARGETS: Record<string, AgentTarget> = {
  claude: { name: 'claude', variables: [ANTHROPIC] },
  gemini: { name: 'gemini', variables: [GEMINI] },
  qwen: { name: 'qwen', variables: [OPENAI] },
  codex: {
    name: 'codex',
    variables: [OPENAI],
    tokenInUrl: false,
    arguments: ([url]) => (url === undefined ? [] : ['-c', `openai_base_url=${JSON.stringify(url)}`]),
  },
  opencode: { name: 'opencode', variables: [], plan: planOpencode },
  generic: { name: 'generic', variables: [ANTHROPIC, OPENAI, GEMINI] },
};

export const AGENT_NAMES = Object.keys(AGENT_TARGETS);

/** The agent a command line starts, by the basename of its command (`/usr/bin/claude`, `claude.cmd`); generic otherwise. */
export function detectAgent(command: string): AgentTarget {
  const name = basename(command)
    .replace(/\.(cmd|exe|js|mjs)$/i, '')
    .toLowerCase();
  return AGENT_TARGETS[name] ?? (AGENT_TARGETS['generic'] as AgentTarget);
}

/** How this run points the agent: its own plan, else each variable set to its proxy URL. */
export function planRun(target: AgentTarget, env: NodeJS.ProcessEnv, cwd: string): RunPlan {
  if (target.plan !== undefined) return target.plan(env, cwd);
  return {
    baseUrls: target.variables.map((variable) => ({ ...variable, previous: nonEmpty(env[variable.name]) })),
    environment: (proxyUrls) =>
      Object.fromEntries(target.variables.map((variable, index) => [variable.name, proxyUrls[index] ?? ''])),
    arguments: (proxyUrls) => target.arguments?.(proxyUrls) ?? [],
  };
}

/**
 * OpenCode: the default providers (Anthropic, OpenAI, Google) and every provider whose config sets
 * a base URL, each at what OpenCode would have used; pointed by OPENCODE_CONFIG_CONTENT (the user's
 * own, when set, with each provider's `options.baseURL` replaced), so no file is edited.
 */
function planOpencode(env: NodeJS.ProcessEnv, cwd: string): RunPlan {
  const configured = readOpencodeBaseUrls(env, cwd);
  const ids = [...new Set([...Object.keys(OPENCODE_DEFAULT_PROVIDERS), ...configured.keys()])];
  return {
    baseUrls: ids.map((id) => ({
      name: `OpenCode provider ${id} (options.baseURL)`,
      providerDefault: OPENCODE_DEFAULT_PROVIDERS[id] ?? '',
      previous: configured.get(id),
    })),
    environment: (proxyUrls) => ({
      OPENCODE_CONFIG_CONTENT: opencodeInlineConfig(
        env['OPENCODE_CONFIG_CONTENT'],
        new Map(ids.map((id, index) => [id, proxyUrls[index] ?? ''])),
      ),
    }),
    arguments: () => [],
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
