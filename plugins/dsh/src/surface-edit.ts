/**
 * A surface replacement, planned as data: which nodes it covers, what the one node replacing them
 * holds, and a description without message contents. `planHeal` and `planBalance` produce them;
 * `applyEdits` commits them to the session.
 *
 * The session log is append-only; the only way to change what `deriveMessages()` returns is a
 * replace surface op, and each one turns a contiguous range of nodes into ONE node.
 */
import type { ContentBlock } from './host.js';
import type { SurfaceNode } from './surface.js';

export type EditKind = 'strip-unanswered' | 'restore-calls' | 'neutralise-orphan' | 'fold-duplicates' | 'balance';

export interface SurfaceEdit {
  readonly kind: EditKind;
  readonly role: 'assistant' | 'user';
  /** First and last surface node (event seq) the new node replaces. */
  readonly start: number;
  readonly end: number;
  /** Every shadowed node, as the session requires of a replacement. */
  readonly sources: number[];
  readonly content: ContentBlock[];
  /** The node whose turn/step (assistant) or source (user) the replacement keeps. */
  readonly base: SurfaceNode;
  /** What was done, without message contents (safe to log). */
  readonly detail: string;
}
