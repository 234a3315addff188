import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { readJsonRecord, writeJsonRecord } from './private-json-file.js';

/** The file, in the user's config directory, that remembers which project configs were trusted. */
export const TRUST_FILE = 'trusted-projects.json';

export interface TrustEntry {
  sha256: string;
  trustedAt: string;
}

/**
 * Workspace trust for `.unstuck/config.json`, as editors do it: the user trusts one file at one
 * content, and the decision is kept in the user's own config directory by the file's real path
 * and the sha256 of its bytes. Any change to the bytes revokes it; nothing inside the project
 * (and so nothing the model writes there) can add an entry.
 */
export interface ProjectTrust {
  /** Where decisions are kept; undefined when the environment names no home (nothing is remembered). */
  readonly file: string | undefined;
  isTrusted(path: string, sha256: string): Promise<boolean>;
  /** Remembers `path` at `sha256`, replacing what was trusted there before. */
  trust(path: string, sha256: string): Promise<void>;
}

export function sha256Of(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

export function createProjectTrust(directory: string | undefined, now: () => Date = () => new Date()): ProjectTrust {
  const file = directory === undefined ? undefined : join(directory, TRUST_FILE);
  const load = (): Promise<Record<string, TrustEntry>> => readJsonRecord<TrustEntry>(file, 'projects');
  return {
    file,
    async isTrusted(path, sha256) {
      const entry = (await load())[path];
      return entry !== null && typeof entry === 'object' && entry.sha256 === sha256;
    },
    async trust(path, sha256) {
      if (file === undefined || directory === undefined)
        throw new Error('no home directory to remember the trust in (set HOME or XDG_CONFIG_HOME)');
      const projects = await load();
      projects[path] = { sha256, trustedAt: now().toISOString() };
      await writeJsonRecord(directory, file, 'projects', projects);
    },
  };
}
