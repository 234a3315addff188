import { readFile, writeFile } from 'node:fs/promises';
import type { Tool } from '../agent-port.js';
import type { Confirm } from './confirm.js';
import { declined } from './confirm.js';
import { resolveInWorkspace } from './resolve-in-workspace.js';
import { requiredString, toolArguments } from './tool-arguments.js';

export function createEditFileTool(root: string, confirm: Confirm): Tool {
  return {
    name: 'edit_file',
    description: 'Replace one exact occurrence of old_text with new_text in a file of the working directory. old_text must occur exactly once. Asks the user first.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'File path, relative to the working directory' },
        old_text: { type: 'string', description: 'The exact text to replace; must occur exactly once' },
        new_text: { type: 'string', description: 'The replacement text' },
      },
      required: ['path', 'old_text', 'new_text'],
      additionalProperties: false,
    },
    async run(args, { signal }) {
      const input = toolArguments(args);
      const requested = requiredString(input, 'path');
      const oldText = requiredString(input, 'old_text');
      const newText = requiredString(input, 'new_text');
      if (oldText === '') throw new Error('old_text must not be empty');
      const path = await resolveInWorkspace(root, requested);
      const text = await readFile(path, 'utf8');
      const at = text.indexOf(oldText);
      if (at === -1) throw new Error(`old_text was not found in ${requested}`);
      if (text.indexOf(oldText, at + 1) !== -1) throw new Error(`old_text occurs more than once in ${requested}; include more context`);
      const line = text.slice(0, at).split('\n').length;
      const action = `edit ${requested} at line ${line} (${oldText.split('\n').length} lines -> ${newText.split('\n').length} lines)`;
      if (!(await confirm({ tool: 'edit_file', action }, signal))) throw declined('edit_file');
      signal.throwIfAborted();
      await writeFile(path, text.slice(0, at) + newText + text.slice(at + oldText.length));
      return `edited ${requested} at line ${line}`;
    },
  };
}
