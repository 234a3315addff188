/** The session's ordered surface as the plugin reads it: one entry per node, with its derived message. */
import type { Message, Session, SessionEvent } from './host.js';

export interface SurfaceNode {
  readonly seq: number;
  readonly event: SessionEvent;
  /** What the node contributes to the request; null for a node that derives nothing (an empty assistant). */
  readonly message: Message | null;
}

export function eventAt(session: Session, seq: number): SessionEvent | undefined {
  const events = session.events;
  const direct = events[seq];
  if (direct !== undefined && direct.seq === seq) return direct;
  return events.find((event) => event.seq === seq);
}

export function readSurface(session: Session): SurfaceNode[] {
  const nodes: SurfaceNode[] = [];
  for (const seq of session.surface.nodes) {
    const event = eventAt(session, seq);
    if (event === undefined) continue;
    nodes.push({ seq, event, message: session.deriveEventMessage(event) });
  }
  return nodes;
}

/** The reason the most recent closed turn ended, or undefined when no turn has ended yet. */
export function lastTurnEnd(session: Session): { kind: string } | undefined {
  const events = session.events;
  for (let index = events.length - 1; index >= 0; index -= 1) {
    const event = events[index];
    if (event?.type === 'turn/start') return undefined;
    if (event?.type === 'turn/end') return (event.data as { reason: { kind: string } }).reason;
  }
  return undefined;
}
