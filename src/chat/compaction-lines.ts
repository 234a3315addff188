import type { AgentEvent } from '../agent/index.js';
import type { TerminalStyle } from './terminal-style.js';

type CompactionEvent = Extract<AgentEvent, { type: 'compaction-start' | 'compaction-end' | 'compaction-failed' }>;

const count = (value: number): string => value.toLocaleString('en-US');

/** The chat's one line for each step of a compaction: what is summarized, and what it saved. */
export function compactionLine(event: CompactionEvent, style: TerminalStyle): string {
  switch (event.type) {
    case 'compaction-start':
      return style.dim(
        `compacting: summarizing ${count(event.messages)} older messages (the request was about ${count(event.estimatedTokens)} tokens)`,
      );
    case 'compaction-end':
      return style.green(
        `compacted ${count(event.messages)} messages into a summary: about ${count(event.tokensBefore)} -> ${count(event.tokensAfter)} tokens, ${count(event.savedTokens)} saved (the session file keeps every message)`,
      );
    case 'compaction-failed':
      return style.yellow(`compaction failed: ${event.message}`);
  }
}
