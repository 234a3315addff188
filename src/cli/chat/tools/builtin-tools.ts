import type { Tool } from '../agent-port.js';
import type { Confirm } from './confirm.js';
import { createEditFileTool } from './edit-file-tool.js';
import { createListDirectoryTool } from './list-directory-tool.js';
import { createReadFileTool } from './read-file-tool.js';
import { createRunCommandTool } from './run-command-tool.js';
import { createSearchTextTool } from './search-text-tool.js';
import { createWriteFileTool } from './write-file-tool.js';

/** The chat's tools, all confined to `root`; the ones that change something ask `confirm` first. */
export function createBuiltinTools(options: { root: string; confirm: Confirm; env: Record<string, string | undefined> }): Tool[] {
  const { root, confirm, env } = options;
  return [
    createReadFileTool(root),
    createListDirectoryTool(root),
    createSearchTextTool(root),
    createWriteFileTool(root, confirm),
    createEditFileTool(root, confirm),
    createRunCommandTool(root, confirm, env),
  ];
}
