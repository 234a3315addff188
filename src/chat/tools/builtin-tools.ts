import type { Tool } from '../../agent/index.js';
import { userConfigDirectory } from '../user-config-directory.js';
import type { Confirm } from './confirm.js';
import { createEditFileTool } from './edit-file-tool.js';
import { createFileLedger } from './file-ledger.js';
import { createListDirectoryTool } from './list-directory-tool.js';
import { createReadFileTool } from './read-file-tool.js';
import { createRunCommandTool } from './run-command-tool.js';
import { createSearchTextTool } from './search-text-tool.js';
import { createWriteFileTool } from './write-file-tool.js';

/**
 * The chat's tools, all confined to `root`; the ones that change something ask `confirm` first.
 * Read-only (run concurrently within a block): read_file, list_directory, search_text. Side
 * effects (run alone, in the model's order): write_file, edit_file, run_command. One file ledger
 * per chat: what read_file saw is what write_file and edit_file check the file against.
 */
export function createBuiltinTools(options: {
  root: string;
  confirm: Confirm;
  env: Record<string, string | undefined>;
}): Tool[] {
  const { root, confirm, env } = options;
  const ledger = createFileLedger();
  // Where the user's own config and trust decisions are: never the model's to write, like .unstuck/.
  const userConfig = userConfigDirectory(env);
  const writable = userConfig === undefined ? {} : { userConfig };
  return [
    createReadFileTool(root, ledger),
    createListDirectoryTool(root),
    // Declared here, not in its file: search_text only reads.
    { ...createSearchTextTool(root), readOnly: true },
    createWriteFileTool(root, confirm, ledger, writable),
    createEditFileTool(root, confirm, ledger, writable),
    // Undeclared, so side effects: a command can change anything.
    createRunCommandTool(root, confirm, env),
  ];
}
