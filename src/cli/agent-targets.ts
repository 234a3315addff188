import { basename } from 'node:path';

/** A base-URL variable an agent honours, and where its requests go when it was not set. */
export interface BaseUrlVariable {
  name: string;
  /** The provider's own base URL, as the agent's SDK would use it with the variable unset. */
  providerDefault: string;
}

export interface AgentTarget {
  name: string;
  variables: readonly BaseUrlVariable[];
  /**
   * Extra arguments put before the user's own (a one-run config override), given the base URL of
   * the proxy for the variable of the same index; none for agents that read the environment.
   */
  arguments?: (proxyUrls: readonly string[]) => string[];
  /** Said on stderr before the run when the agent cannot be pointed at the proxy for one run. */
  note?: string;
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
 * OpenAI-compatible tools) OPENAI_BASE_URL. Codex's built-in `openai` provider reads
 * OPENAI_BASE_URL too; newer releases read the `openai_base_url` config key instead, which `-c`
 * sets for one run without touching ~/.codex/config.toml. OpenCode takes its base URLs from its
 * config file only, so it is given the generic variables and told the line to add.
 */
export const AGENT_TARGETS: Record<string, AgentTarget> = {
  claude: { name: 'claude', variables: [ANTHROPIC] },
  gemini: { name: 'gemini', variables: [GEMINI] },
  qwen: { name: 'qwen', variables: [OPENAI] },
  codex: {
    name: 'codex',
    variables: [OPENAI],
    arguments: ([url]) => (url === undefined ? [] : ['-c', `openai_base_url=${JSON.stringify(url)}`]),
  },
  opencode: {
    name: 'opencode',
    variables: [ANTHROPIC, OPENAI],
    note: 'unstuck run: OpenCode takes its base URLs from opencode.json, so it may not go through unstuck; to be sure, run `unstuck proxy --upstream anthropic=https://api.anthropic.com` and add to opencode.json: "provider": {"anthropic": {"options": {"baseURL": "http://127.0.0.1:8787/v1"}}}',
  },
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
