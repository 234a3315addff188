/** Commit a planned surface replacement to the live session, one replace op per edit. */

import type { AssistantMessage, MessageSource, UserMessage } from '@deepseek-ai/dsh-llm';
import { createAssistantMessage, createUserMessage } from '@deepseek-ai/dsh-llm';
import type { Session } from './host.js';
import type { SurfaceEdit } from './surface-edit.js';

/** The plugin's own message source, so a reader of the log can tell our replacements apart. */
export const PLUGIN_SOURCE = { kind: 'plugin', plugin: 'unstuck-dsh' } as const;

export interface Position {
  readonly turn: number;
  readonly step: number;
}

function positionOf(edit: SurfaceEdit, at: Position | undefined): Position {
  if (at !== undefined) return at;
  const data = edit.base.event.data as Partial<Position>;
  return { turn: typeof data.turn === 'number' ? data.turn : 0, step: typeof data.step === 'number' ? data.step : 0 };
}

/**
 * Append each edit as a replacement. `at` is the open turn/step when one is open (the
 * agent-loop invariant wants events stamped with it); otherwise an assistant keeps its own.
 * The replacement assistant drops the original's `replayState`: a provider replaying raw
 * state would resend the very calls the replacement removes. Its reasoning blocks stay.
 */
export function applyEdits(session: Session, edits: readonly SurfaceEdit[], at?: Position): void {
  for (const edit of edits) {
    const surfaceOp = { op: 'replace' as const, start: edit.start, end: edit.end };
    if (edit.role === 'assistant') {
      const original = edit.base.message as AssistantMessage;
      const message = createAssistantMessage({
        content: edit.content,
        source: { provider: original.source.provider, model: original.source.model },
      });
      session.append(
        'assistant/message',
        { ...positionOf(edit, at), message },
        { surfaceOp, sourceEventSeqs: edit.sources },
      );
    } else {
      const base = edit.base.message as UserMessage;
      const source: MessageSource =
        edit.kind === 'neutralise-orphan' ? PLUGIN_SOURCE : base.source.kind === 'tool' ? PLUGIN_SOURCE : base.source;
      const message = createUserMessage({ content: edit.content, source });
      session.append('user/message', message, { surfaceOp, sourceEventSeqs: edit.sources });
    }
  }
}
