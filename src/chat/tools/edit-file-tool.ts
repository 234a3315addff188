import type { Tool } from '../../agent/index.js';
import type { Confirm } from './confirm.js';
import { declined } from './confirm.js';
import type { FileLedger } from './file-ledger.js';
import { modifiedSinceRead } from './file-ledger.js';
import { readRegularFile } from './read-regular-file.js';
import { replaceFileAtomically } from './replace-file-atomically.js';
import { resolveWritableInWorkspace } from './resolve-in-workspace.js';
import { requiredString, toolArguments } from './tool-arguments.js';

/** Larger than read_file reads, so a file that grew past it is reported as changed, not as too large. */
const MAX_FILE_BYTES = 64 * 1024 * 1024;

/**
 * Side effects. Edits only a file the model has read (or written) in this chat and that has not
 * changed since (see `FileLedger`); the edit is applied to exactly those bytes and written atomically.
 */
export function createEditFileTool(
  root: string,
  confirm: Confirm,
  ledger: FileLedger,
  options: { userConfig?: string } = {},
): Tool {
  return {
    name: 'edit_file',
    description:
      'Replace one exact occurrence of old_text with new_text in a file of the working directory. old_text must occur exactly once. The file must have been read with read_file first. Asks the user first.',
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
    readOnly: false,
    async run(args, { signal }) {
      const input = toolArguments(args);
      const requested = requiredString(input, 'path');
      const oldText = requiredString(input, 'old_text');
      const newText = requiredString(input, 'new_text');
      if (oldText === '') throw new Error('old_text must not be empty');
      const path = await resolveWritableInWorkspace(root, requested, options.userConfig);
      const before = await readRegularFile(path, requested, MAX_FILE_BYTES);
      await ledger.assertUnchanged(path, requested, before.bytes);
      const text = before.bytes.toString('utf8');
      // Writing back text decoded with U+FFFD in place of bad bytes would change parts the model never touched.
      if (Buffer.byteLength(text) !== before.bytes.byteLength || !Buffer.from(text, 'utf8').equals(before.bytes))
        throw new Error(
          `${requested} is not valid UTF-8 text; edit_file would change bytes outside the edit (use write_file or run_command)`,
        );
      const at = text.indexOf(oldText);
      if (at === -1) throw new Error(`old_text was not found in ${requested}`);
      if (text.indexOf(oldText, at + 1) !== -1)
        throw new Error(`old_text occurs more than once in ${requested}; include more context`);
      const line = text.slice(0, at).split('\n').length;
      const action = `edit ${requested} at line ${line} (${oldText.split('\n').length} lines -> ${newText.split('\n').length} lines)`;
      if (!(await confirm({ tool: 'edit_file', action }, signal))) throw declined('edit_file');
      signal.throwIfAborted();
      // Asking may have taken a while: the edit applies only to the bytes it was computed from.
      const now = await readRegularFile(path, requested, MAX_FILE_BYTES);
      if (!now.bytes.equals(before.bytes)) throw modifiedSinceRead(requested);
      const data = Buffer.from(text.slice(0, at) + newText + text.slice(at + oldText.length), 'utf8');
      const recordedAt = Date.now();
      const stat = await replaceFileAtomically(path, data, requested, signal);
      ledger.remember(path, data, { stat, recordedAt });
      return `edited ${requested} at line ${line}`;
    },
  };
}
