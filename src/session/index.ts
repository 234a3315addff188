/** `unstuck/session`: where a conversation lives between turns. */

export type { DatabaseSessionEntry, DatabaseStoreOptions } from './database-store.js';
export { formatJournal, parseJournal } from './journal-codec.js';
export { createJournalStore } from './journal-store.js';
export { createMemoryStore } from './memory-store.js';
export type { PostgresConnection, PostgresStoreOptions } from './postgres-store.js';
export { createPostgresStore, listPostgresSessions } from './postgres-store.js';
export type { SqliteStoreOptions } from './sqlite-store.js';
export { createSqliteStore, listSqliteSessions } from './sqlite-store.js';
export { formatTranscript, parseTranscript } from './transcript-codec.js';
export { createTranscriptStore } from './transcript-store.js';
export type {
  FileStoreOptions,
  JournalStoreOptions,
  LoadResult,
  SessionProblem,
  SessionStore,
  TranscriptStoreOptions,
} from './types.js';
