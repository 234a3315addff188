import type { Message } from '../core/messages.js';
import type { WriterLock } from './writer-lock.js';

/** Something a load could not read: where it is, and why. A damaged file is data, not an exception. */
export interface SessionProblem {
  file: string;
  /** 1-based line in `file`, when the problem has one. */
  line?: number;
  why: string;
}

export interface LoadResult {
  messages: Message[];
  problems: SessionProblem[];
}

/**
 * Where a conversation lives between turns. Every implementation keeps the messages it is given
 * exactly (deep-equal after a JSON round trip), in order, and drops none of them: repairing a
 * history is the caller's decision, never the store's.
 */
export interface SessionStore {
  /** Never throws on damage: every intact message comes back, and `problems` lists the rest. */
  load(): Promise<LoadResult>;
  /** Replaces the session. Atomic: a crash leaves the old session or the new one, whole. */
  save(messages: readonly Message[]): Promise<void>;
  /** Adds messages at the end and makes them durable (fsync) before resolving. */
  append?(messages: readonly Message[]): Promise<void>;
  /** Releases the writer lock taken by the first save or append. */
  close(): Promise<void>;
}

export interface FileStoreOptions {
  /** How long a second writer waits for the lock before failing with `SESSION_LOCKED`. Default 3000 ms. */
  lockTimeoutMs?: number;
  /**
   * The writer lock on this file, already held by the caller (who read the file under it and
   * releases it): the store writes under it instead of taking its own, and `close` leaves it held.
   */
  lock?: WriterLock;
}

export interface TranscriptStoreOptions extends FileStoreOptions {
  /**
   * A session longer than this is split: every full block of this many messages goes to its own
   * segment file, declared by the main file. Default 1000.
   */
  segmentMessages?: number;
}

export type JournalStoreOptions = FileStoreOptions;
