import { readdir } from 'node:fs/promises';
import type { Tool } from '../../agent/index.js';
import { limitText } from './limit-text.js';
import { resolveInWorkspace } from './resolve-in-workspace.js';
import { optionalString, toolArguments } from './tool-arguments.js';

const MAX_ENTRIES = 1000;

export function createListDirectoryTool(root: string): Tool {
  return {
    name: 'list_directory',
    description: 'List the entries of a directory in the working directory (directories end with /).',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'Directory path, relative to the working directory; default "."' },
      },
      additionalProperties: false,
    },
    readOnly: true,
    async run(args) {
      const input = toolArguments(args ?? {});
      const path = await resolveInWorkspace(root, optionalString(input, 'path') ?? '.');
      const entries = await readdir(path, { withFileTypes: true });
      const names = entries.map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.name)).sort();
      if (names.length === 0) return '(empty directory)';
      const shown = names.slice(0, MAX_ENTRIES);
      const more = names.length - shown.length;
      return limitText(`${shown.join('\n')}${more > 0 ? `\n[... ${more} more entries]` : ''}`);
    },
  };
}
