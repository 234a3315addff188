import { mkdir, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Tool } from '../agent-port.js';
import type { Confirm } from './confirm.js';
import { declined } from './confirm.js';
import { resolveInWorkspace } from './resolve-in-workspace.js';
import { requiredString, toolArguments } from './tool-arguments.js';

export function createWriteFileTool(root: string, confirm: Confirm): Tool {
  return {
    name: 'write_file',
    description: 'Create or overwrite a file in the working directory with the given content. Asks the user first.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'File path, relative to the working directory' },
        content: { type: 'string', description: 'The whole new content of the file' },
      },
      required: ['path', 'content'],
      additionalProperties: false,
    },
    async run(args, { signal }) {
      const input = toolArguments(args);
      const requested = requiredString(input, 'path');
      const content = requiredString(input, 'content');
      const path = await resolveInWorkspace(root, requested);
      const existing = await stat(path).catch(() => undefined);
      if (existing?.isDirectory() === true) throw new Error(`${requested} is a directory`);
      const bytes = Buffer.byteLength(content);
      const action = `${existing === undefined ? 'create' : 'overwrite'} ${requested} (${bytes} bytes)`;
      if (!(await confirm({ tool: 'write_file', action }, signal))) throw declined('write_file');
      signal.throwIfAborted();
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, content);
      return `wrote ${bytes} bytes to ${requested}`;
    },
  };
}
