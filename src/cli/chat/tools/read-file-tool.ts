import { readFile, stat } from 'node:fs/promises';
import type { Tool } from '../agent-port.js';
import { limitText } from './limit-text.js';
import { resolveInWorkspace } from './resolve-in-workspace.js';
import { optionalInteger, requiredString, toolArguments } from './tool-arguments.js';

const MAX_FILE_BYTES = 8 * 1024 * 1024;

export function createReadFileTool(root: string): Tool {
  return {
    name: 'read_file',
    description: 'Read a text file in the working directory. Optionally a range of lines: offset (1-based first line) and limit (number of lines).',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'File path, relative to the working directory' },
        offset: { type: 'integer', description: 'First line to return, 1-based' },
        limit: { type: 'integer', description: 'How many lines to return' },
      },
      required: ['path'],
      additionalProperties: false,
    },
    async run(args) {
      const input = toolArguments(args);
      const path = await resolveInWorkspace(root, requiredString(input, 'path'));
      const offset = optionalInteger(input, 'offset');
      const limit = optionalInteger(input, 'limit');
      const info = await stat(path);
      if (info.isDirectory()) throw new Error(`${input.path as string} is a directory (use list_directory)`);
      if (info.size > MAX_FILE_BYTES) throw new Error(`${input.path as string} is ${info.size} bytes, more than this tool reads (${MAX_FILE_BYTES})`);
      const buffer = await readFile(path);
      if (buffer.includes(0)) throw new Error(`${input.path as string} looks like a binary file`);
      let text = buffer.toString('utf8');
      if (offset !== undefined || limit !== undefined) {
        const lines = text.split('\n');
        const first = Math.max(1, offset ?? 1);
        const selected = lines.slice(first - 1, limit === undefined ? undefined : first - 1 + limit);
        text = `[lines ${first}-${first + selected.length - 1} of ${lines.length}]\n${selected.join('\n')}`;
      }
      return limitText(text);
    },
  };
}
