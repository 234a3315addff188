import { lstat, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Tool } from '../../agent/index.js';
import type { Confirm } from './confirm.js';
import { declined } from './confirm.js';
import type { FileLedger } from './file-ledger.js';
import { replaceFileAtomically } from './replace-file-atomically.js';
import { resolveWritableInWorkspace } from './resolve-in-workspace.js';
import { requiredString, toolArguments } from './tool-arguments.js';

/**
 * Side effects. Creating a file needs nothing; overwriting one needs the model to have read it (or
 * written it) in this chat, unchanged since (see `FileLedger`). The write is atomic.
 */
export function createWriteFileTool(
  root: string,
  confirm: Confirm,
  ledger: FileLedger,
  options: { userConfig?: string } = {},
): Tool {
  return {
    name: 'write_file',
    description:
      'Create or overwrite a file in the working directory with the given content. An existing file must have been read with read_file first. Asks the user first.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'File path, relative to the working directory' },
        content: { type: 'string', description: 'The whole new content of the file' },
      },
      required: ['path', 'content'],
      additionalProperties: false,
    },
    readOnly: false,
    async run(args, { signal }) {
      const input = toolArguments(args);
      const requested = requiredString(input, 'path');
      const content = requiredString(input, 'content');
      const path = await resolveWritableInWorkspace(root, requested, options.userConfig);
      const exists = await checkTarget(path, requested, ledger);
      const data = Buffer.from(content, 'utf8');
      const action = `${exists ? 'overwrite' : 'create'} ${requested} (${data.byteLength} bytes)`;
      if (!(await confirm({ tool: 'write_file', action }, signal))) throw declined('write_file');
      signal.throwIfAborted();
      // Asking may have taken a while: the file may have changed (or appeared) meanwhile.
      await checkTarget(path, requested, ledger);
      await mkdir(dirname(path), { recursive: true }).catch((error: NodeJS.ErrnoException) => {
        // mkdir never follows a link it would create: a dangling link in the way stays in the way.
        if (error.code === 'ENOENT' || error.code === 'ENOTDIR' || error.code === 'EEXIST')
          throw new Error(
            `${requested}: a part of the path is a file or a symbolic link that leads nowhere, not a directory`,
          );
        throw error;
      });
      const recordedAt = Date.now();
      const stat = await replaceFileAtomically(path, data, requested, signal);
      ledger.remember(path, data, { stat, recordedAt });
      return `wrote ${data.byteLength} bytes to ${requested}`;
    },
  };
}

/** Whether `path` exists; throws when it is not a regular file, or is one the model has not seen as it is now. */
async function checkTarget(path: string, requested: string, ledger: FileLedger): Promise<boolean> {
  const existing = await lstat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    if (error.code === 'ENOTDIR') throw new Error(`${requested}: a part of the path is a file, not a directory`);
    throw error;
  });
  if (existing === undefined) return false;
  if (existing.isDirectory()) throw new Error(`${requested} is a directory`);
  // A link that resolves inside the workspace was followed already; one still here leads nowhere or outside.
  if (existing.isSymbolicLink())
    throw new Error(
      `${requested} is a symbolic link whose target does not exist or is outside the working directory; it is not followed`,
    );
  if (!existing.isFile()) throw new Error(`${requested} is not a regular file; only regular files are written`);
  await ledger.assertUnchanged(path, requested);
  return true;
}
