import type { Change, Message, ProfileName } from '../core/index.js';
import { repair } from '../core/index.js';
import type { SessionProblem, SessionStore } from '../session/index.js';
import { collectIds, reusesIds } from './call-ids.js';
import { lastUserIndex } from './turn-messages.js';

export interface OpenedSession {
  /** What the repair on open changed in the loaded history. */
  changes: Change[];
  /** What the store could not read back. */
  problems: SessionProblem[];
}

export interface RepairOutcome {
  changed: boolean;
  changes: Change[];
}

/**
 * The runner's history and its session. Owns what is appended and when it is saved, and keeps two
 * invariants whatever the turn does: a user's message is never removed (no repair folds it, and it
 * is added only after the history was repaired), and a tool block's results reach the store
 * together, in one save, with the hints that follow them.
 */
export interface AgentHistory {
  /** The history now. Appends happen in place; a repair or a compaction replaces the array. */
  readonly messages: Message[];
  /** Whether `open` has started (and not failed): the first turn reports the repair on open. */
  readonly opened: boolean;
  /** Loads and repairs the session once; a failed open is tried again next time. */
  open(): Promise<OpenedSession>;
  /** The full-sequence repair at the start of a turn, kept in memory: `appendUser` saves it. */
  repairWhole(): RepairOutcome;
  /** Adds the user's message and saves. */
  appendUser(text: string): Promise<void>;
  /**
   * The repair at request scope before every request, kept in memory (`save` saves it). The first
   * request of a turn repairs the whole history; later ones repair the turn's own messages (from its
   * last user message on) and check their call ids against the rest, which was valid and has not
   * changed since: the same result as a full repair at a fraction of the cost on a long session.
   * Anything found falls back to the full repair.
   */
  prepareRequest(): RepairOutcome;
  /** The strongest repair after the provider rejected the history: kept and saved. */
  heal(): Promise<Change[]>;
  /** Adds an assistant message and saves. */
  append(message: Message): Promise<void>;
  /**
   * A tool block has started: `results` resolves to its tool messages, in call order. Until
   * `closeBlock`, nothing else may be added; `settle` adds the results if the turn stops first.
   */
  openBlock(results: Promise<Message[]>): void;
  /** Adds the block's results and the hints after them, and saves them together. */
  closeBlock(messages: readonly Message[]): Promise<void>;
  /** Puts a compacted history in place and saves it; on a failed save the history is put back and it throws. */
  replace(next: Message[]): Promise<void>;
  /** Saves what the store does not have yet: appended messages, or the whole history after a repair. */
  save(): Promise<void>;
  /** Leaves the history whole after a turn that stopped anywhere: the open block answered, repaired, saved. */
  settle(): Promise<void>;
}

export function createAgentHistory(options: {
  store: SessionStore;
  profile: ProfileName;
  model: string;
  thinking: boolean;
}): AgentHistory {
  const { store } = options;
  // A user's message is never removed: even the strongest repair keeps a repeated one (core option).
  const repairOptions = {
    profile: options.profile,
    model: options.model,
    thinking: options.thinking,
    foldRepeatedUserMessages: false,
  } as const;
  let history: Message[] = [];
  /** How many messages at the start of `history` the store already has, unchanged. */
  let persisted = 0;
  /** The array was replaced since the last save: the next save rewrites the session. */
  let rewrite = false;
  let opening: Promise<OpenedSession> | undefined;
  /** The history array and length last found valid at request scope (see prepareRequest). */
  let verified: { array: Message[]; length: number; priorIds: Set<string>; tailStart: number } | undefined;
  let openResults: Promise<Message[]> | undefined;

  function adopt(result: { messages: Message[]; changed: boolean }): void {
    if (!result.changed) return;
    history = result.messages;
    rewrite = true;
  }

  function assertNoOpenBlock(what: string): void {
    if (openResults !== undefined) throw new Error(`${what} while a tool block is open: its results go first`);
  }

  async function save(): Promise<void> {
    if (!rewrite && persisted === history.length) return;
    try {
      if (!rewrite && store.append !== undefined) await store.append(history.slice(persisted));
      else await store.save(history);
    } catch (error) {
      throw new Error(`could not save the session: ${error instanceof Error ? error.message : String(error)}`, {
        cause: error,
      });
    }
    persisted = history.length;
    rewrite = false;
  }

  return {
    get messages() {
      return history;
    },
    get opened() {
      return opening !== undefined;
    },
    open() {
      opening ??= (async () => {
        const loaded = await store.load();
        history = loaded.messages;
        persisted = history.length;
        const repaired = repair(history, repairOptions);
        adopt(repaired);
        await save();
        return { changes: repaired.changes, problems: loaded.problems };
      })().catch((error: unknown) => {
        opening = undefined;
        throw error;
      });
      return opening;
    },
    repairWhole() {
      const repaired = repair(history, repairOptions);
      adopt(repaired);
      return repaired;
    },
    async appendUser(text) {
      assertNoOpenBlock("the user's message");
      history.push({ role: 'user', content: text });
      verified = undefined;
      await save();
    },
    prepareRequest() {
      const state = verified;
      if (state !== undefined && state.array === history && history.length >= state.length) {
        const tailStart = lastUserIndex(history);
        if (tailStart >= 0 && tailStart === state.tailStart) {
          const tail = repair(history.slice(tailStart), { ...repairOptions, scope: 'request' });
          if (!tail.changed && !reusesIds(history, tailStart, state.priorIds)) {
            state.length = history.length;
            return { changed: false, changes: [] };
          }
        }
      }
      const full = repair(history, { ...repairOptions, scope: 'request' });
      adopt(full);
      const tailStart = lastUserIndex(history);
      verified = {
        array: history,
        length: history.length,
        priorIds: collectIds(history, 0, Math.max(0, tailStart)),
        tailStart,
      };
      return full;
    },
    async heal() {
      const strongest = repair(history, { ...repairOptions, scope: 'request', level: 'strongest' });
      adopt(strongest);
      await save();
      return strongest.changes;
    },
    async append(message) {
      assertNoOpenBlock('an assistant message');
      history.push(message);
      await save();
    },
    openBlock(results) {
      assertNoOpenBlock('a tool block');
      openResults = results;
    },
    async closeBlock(messages) {
      openResults = undefined;
      history.push(...messages);
      await save();
    },
    async replace(next) {
      const before = { history, rewrite };
      history = next;
      rewrite = true;
      verified = undefined;
      try {
        await save();
      } catch (error) {
        ({ history, rewrite } = before);
        throw error;
      }
    },
    save,
    async settle() {
      if (openResults !== undefined) {
        const results = await openResults;
        openResults = undefined;
        history.push(...results);
      }
      adopt(repair(history, repairOptions));
      await save();
    },
  };
}
