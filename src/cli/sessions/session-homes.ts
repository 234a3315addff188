import { join } from 'node:path';

/** Where an agent keeps its sessions by default, honouring the agent's own environment variables. */
export interface SessionHome {
  /** The agent's name as shown (there may be no reader for it yet). */
  agent: string;
  path: string;
}

/** Extension ids of Cline and Roo Code, whose task folders hold api_conversation_history.json. */
const EXTENSIONS = ['saoudrizwan.claude-dev', 'rooveterinaryinc.roo-cline'];
/** VS Code and its forks, on Linux and macOS (Windows: %APPDATA%). */
const EDITORS = ['Code', 'Code - Insiders', 'VSCodium', 'Cursor', 'Windsurf'];

export function sessionHomes(env: Record<string, string | undefined>): SessionHome[] {
  const home = env['HOME'] ?? env['USERPROFILE'] ?? '';
  const homes: SessionHome[] = [
    { agent: 'Claude Code', path: join(env['CLAUDE_CONFIG_DIR'] ?? join(home, '.claude'), 'projects') },
    { agent: 'Codex', path: join(env['CODEX_HOME'] ?? join(home, '.codex'), 'sessions') },
    { agent: 'Gemini CLI', path: join(home, '.gemini', 'tmp') },
    // OpenCode's opencode.db (all its sessions in one SQLite file): read by sessions/opencode-command.ts.
    { agent: 'OpenCode', path: join(env['XDG_DATA_HOME'] ?? join(home, '.local', 'share'), 'opencode') },
    // Qwen Code's Storage: QWEN_RUNTIME_DIR, else QWEN_HOME, else ~/.qwen; chats under projects/<cwd-slug>/chats/.
    { agent: 'Qwen Code', path: join(env['QWEN_RUNTIME_DIR'] ?? env['QWEN_HOME'] ?? join(home, '.qwen'), 'projects') },
    // The Cline CLI (npm `cline` 2.x, the extension's core without VS Code): `$CLINE_DIR/data/tasks/<id>/`.
    { agent: 'Cline / Roo Code', path: join(env['CLINE_DIR'] ?? join(home, '.cline'), 'data', 'tasks') },
  ];
  const configRoots = [
    env['XDG_CONFIG_HOME'] ?? join(home, '.config'),
    join(home, 'Library', 'Application Support'),
    ...(env['APPDATA'] === undefined ? [] : [env['APPDATA']]),
  ];
  for (const root of configRoots)
    for (const editor of EDITORS)
      for (const extension of EXTENSIONS)
        homes.push({
          agent: 'Cline / Roo Code',
          path: join(root, editor, 'User', 'globalStorage', extension, 'tasks'),
        });
  return homes;
}
