import { UnstuckError } from '../../core/errors.js';
import type { AgentName, AgentReader, AgentSession } from './agent-session.js';
import { claudeCodeReader } from './claude-code.js';
import { clineReader } from './cline.js';
import { codexReader } from './codex.js';
import { geminiCliReader } from './gemini-cli.js';
import { openCodeExportReader } from './opencode-export.js';
import { qwenCodeReader } from './qwen-code.js';

/**
 * The agents whose session files are read, one reader file each. Codex reads its rollout JSONL's
 * `response_item`s, Gemini CLI its chats JSONL.
 */
export const agentReaders: readonly AgentReader[] = [
  // Before Claude Code's: a Qwen Code record has its uuid, parentUuid and sessionId too (but Gemini-form parts).
  qwenCodeReader,
  claudeCodeReader,
  clineReader,
  codexReader,
  geminiCliReader,
  // `opencode export` JSON; OpenCode's database itself is read by opencode-command.ts.
  openCodeExportReader,
];

/** In name order (help texts and usage lines list them so), whatever order they are tried in. */
export const agentNames: readonly AgentName[] = agentReaders.map((reader) => reader.agent).sort();

export function isAgentName(name: string): name is AgentName {
  return (agentNames as readonly string[]).includes(name);
}

/**
 * Reads FILE as an agent's session: the agent named by `agent` (--agent), or the one whose format the content
 * shows. Undefined when no agent's format matches (the file is then read as a plain history).
 */
export function readAgentSession(file: string, text: string, agent?: string): AgentSession | undefined {
  if (agent !== undefined) {
    const reader = agentReaders.find((candidate) => candidate.agent === agent);
    if (reader === undefined) throw new UnstuckError('USAGE', `--agent takes ${agentNames.join(', ')}, not '${agent}'`);
    return reader.read(file, text);
  }
  // Each reader's detect is its positive evidence; a file two readers claim is refused, not guessed.
  const claimed = agentReaders.filter((reader) => reader.detect(file, text));
  if (claimed.length > 1)
    throw new UnstuckError(
      'INPUT_INVALID',
      `ambiguous: reads as a session file of ${claimed.map((reader) => reader.label).join(' and of ')}; name one with --agent ${claimed.map((reader) => reader.agent).join('|')}`,
      { file },
    );
  return claimed[0]?.read(file, text);
}

/** What showed a file to be this agent's session (its reader's detect), for `check --json`. */
export function agentEvidence(agent: AgentName): string {
  const reader = agentReaders.find((candidate) => candidate.agent === agent);
  return `${reader?.evidence ?? 'its reader recognised the file'} (${reader?.label ?? agent} session)`;
}

export function agentLabel(agent: AgentName): string {
  return agentReaders.find((reader) => reader.agent === agent)?.label ?? agent;
}
