import type { Tool } from '../../agent/index.js';
import type { FileLedger } from './file-ledger.js';
import { limitText } from './limit-text.js';
import { readRegularFile } from './read-regular-file.js';
import { resolveRealInWorkspace } from './resolve-in-workspace.js';
import { optionalInteger, requiredString, toolArguments } from './tool-arguments.js';

const MAX_FILE_BYTES = 8 * 1024 * 1024;

/** Read-only. Every read tells `ledger` what the model now knows of the file, whatever range it asked for. */
export function createReadFileTool(root: string, ledger: FileLedger): Tool {
  return {
    name: 'read_file',
    description:
      'Read a text file in the working directory. Optionally a range of lines: offset (1-based first line) and limit (number of lines).',
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
    readOnly: true,
    async run(args) {
      const input = toolArguments(args);
      const requested = requiredString(input, 'path');
      const path = await resolveRealInWorkspace(root, requested);
      const offset = optionalInteger(input, 'offset');
      const limit = optionalInteger(input, 'limit');
      const recordedAt = Date.now();
      const file = await readRegularFile(path, requested, MAX_FILE_BYTES);
      ledger.remember(path, file.bytes, file.stable ? { stat: file.stat, recordedAt } : undefined);
      if (file.bytes.includes(0)) throw new Error(`${requested} looks like a binary file`);
      let text = file.bytes.toString('utf8');
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
