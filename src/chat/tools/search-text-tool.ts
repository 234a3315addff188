import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { Tool } from '../../agent/index.js';
import { limitText } from './limit-text.js';
import type { RegexMatcher } from './regex-worker.js';
import { createRegexMatcher } from './regex-worker.js';
import { resolveInWorkspace } from './resolve-in-workspace.js';
import { optionalString, requiredString, toolArguments } from './tool-arguments.js';

const MAX_MATCHES = 200;
const MAX_FILE_BYTES = 2 * 1024 * 1024;
const MAX_FILES = 20_000;
/** Folders that are never worth searching and are often huge. */
const SKIPPED = new Set(['.git', 'node_modules', 'dist', '.unstuck']);

export function createSearchTextTool(root: string, options: { regexTimeLimitMs?: number } = {}): Tool {
  return {
    name: 'search_text',
    description:
      'Search the text files under a directory for a string (or a regular expression with regex: true). Returns file:line: text for each match.',
    parameters: {
      type: 'object',
      properties: {
        pattern: { type: 'string', description: 'Text to look for (case-sensitive)' },
        path: {
          type: 'string',
          description: 'Directory or file to search, relative to the working directory; default "."',
        },
        regex: { type: 'boolean', description: 'Treat pattern as a JavaScript regular expression' },
      },
      required: ['pattern'],
      additionalProperties: false,
    },
    async run(args, { signal }) {
      const input = toolArguments(args);
      const pattern = requiredString(input, 'pattern');
      if (pattern === '') throw new Error('pattern must not be empty');
      let matcher: RegexMatcher | undefined;
      if (input.regex === true) {
        try {
          // Compiling is safe on this thread; matching is not (see regex-worker.ts).
          void new RegExp(pattern);
        } catch (error) {
          throw new Error(`invalid regular expression: ${(error as Error).message}`);
        }
        matcher = createRegexMatcher(
          pattern,
          options.regexTimeLimitMs === undefined ? {} : { timeLimitMs: options.regexTimeLimitMs },
        );
      }
      const matchingLines = async (text: string, limit: number): Promise<number[]> => {
        if (matcher !== undefined) return await matcher.matchLines(text, limit, signal);
        const found: number[] = [];
        const lines = text.split('\n');
        for (let index = 0; index < lines.length && found.length < limit; index += 1)
          if ((lines[index] ?? '').includes(pattern)) found.push(index);
        return found;
      };
      const start = await resolveInWorkspace(root, optionalString(input, 'path') ?? '.');
      const base = await resolveInWorkspace(root, '.');
      const found: string[] = [];
      let files = 0;
      const visit = async (path: string): Promise<void> => {
        if (found.length >= MAX_MATCHES || files >= MAX_FILES) return;
        signal.throwIfAborted();
        const info = await stat(path);
        if (info.isDirectory()) {
          const entries = await readdir(path, { withFileTypes: true });
          entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
          for (const entry of entries) {
            if (entry.isSymbolicLink() || (entry.isDirectory() && SKIPPED.has(entry.name))) continue;
            await visit(join(path, entry.name));
          }
          return;
        }
        if (!info.isFile() || info.size > MAX_FILE_BYTES) return;
        files += 1;
        const buffer = await readFile(path);
        if (buffer.includes(0)) return;
        const text = buffer.toString('utf8');
        const lines = text.split('\n');
        for (const index of await matchingLines(text, MAX_MATCHES - found.length)) {
          const line = lines[index] ?? '';
          found.push(
            `${relative(base, path) || path}:${index + 1}: ${line.length > 300 ? `${line.slice(0, 300)}...` : line}`,
          );
        }
      };
      try {
        await visit(start);
      } finally {
        await matcher?.close();
      }
      if (found.length === 0) return 'no matches';
      const note = found.length >= MAX_MATCHES ? `\n[stopped at ${MAX_MATCHES} matches]` : '';
      return limitText(found.join('\n') + note);
    },
  };
}
