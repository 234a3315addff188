import type { SessionProblem } from '../../session/index.js';

/** The agents whose own session files `check`, `fix` and `scan` read and write. One reader file each. */
export type AgentName = 'claude-code' | 'cline' | 'codex' | 'gemini-cli' | 'opencode' | 'qwen-code';

/**
 * Another agent's session file, read as the history that agent will send on resume. `native` is that history in the
 * agent's wire (Anthropic Messages for Claude Code and Cline/Roo, Responses input items for Codex, Gemini contents for Gemini CLI); `write` puts a repaired `native` back into the
 * file's own text, changing only the lines (or elements) the repair touched.
 */
export interface AgentSession {
  agent: AgentName;
  /** Qwen Code: OpenAI chat, the wire it sends its Gemini-form records on (qwen-code.ts). */
  wire: 'anthropic-messages' | 'responses-input' | 'gemini-contents' | 'openai-chat';
  native: unknown[];
  /** For each element of `native`: the 1-based lines (JSONL) or 0-based element indexes (JSON) it was read from. */
  sources: number[][];
  /** What `sources` counts: lines of the file (1-based) or elements of its JSON array (0-based). */
  sourceKind: 'line' | 'element';
  /** Lines that could not be read: kept as they are, and reported. */
  problems: SessionProblem[];
  /** The file's text with `repaired` (the repair of `native`) in place of `native`. */
  write(repaired: readonly unknown[]): string;
}

/** One agent's session format: recognised from the file's content (and name), read into an AgentSession. */
export interface AgentReader {
  agent: AgentName;
  /** A human name for lists and reports. */
  label: string;
  /** What detect looks for, in words (the evidence `check --json` names). */
  evidence?: string;
  /** Whether `text` (the file at `file`) is this agent's session: on positive evidence only. Cheap: looks at the first lines only. */
  detect(file: string, text: string): boolean;
  /** Reads the session; bad input throws UnstuckError naming the file and line. */
  read(file: string, text: string): AgentSession;
}
