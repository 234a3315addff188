import type { Command } from './command.js';

/**
 * The command table. Each command lives in `commands/<name>.ts`; add one line here per command.
 * Loaded lazily so `unstuck check` does not pay for the proxy's or the chat's imports.
 */
export const commands: Record<string, { summary: string; load: () => Promise<Command> }> = {
  check: {
    summary: 'Name every violation in a history, the way the provider would',
    load: async () => (await import('./commands/check.js')).checkCommand,
  },
  fix: {
    summary: 'Repair a history so the provider accepts it, reporting every change',
    load: async () => (await import('./commands/fix.js')).fixCommand,
  },
  proxy: {
    summary: 'Run an OpenAI-compatible proxy that repairs chat requests on their way to the provider',
    load: async () => (await import('./commands/proxy.js')).proxyCommand,
  },
  emulate: {
    summary: 'Run a strict provider emulator on loopback: checks every request, answers from a script',
    load: async () => (await import('./commands/emulate.js')).emulateCommand,
  },
  chat: {
    summary: 'A terminal agent for DeepSeek or any OpenAI-compatible model, whose sessions never get stuck',
    load: async () => (await import('./commands/chat.js')).chatCommand,
  },
  scan: {
    summary: 'Find the session files of Claude Code, Cline and Roo Code, and check each (never writes)',
    load: async () => (await import('./commands/scan.js')).scanCommand,
  },
  run: {
    summary: 'Run an agent (claude, codex, gemini, qwen…) with its requests repaired on the way to the provider',
    load: async () => (await import('./commands/run-agent.js')).runAgentCommand,
  },
  convert: {
    summary: 'Convert a history between .json, .jsonl and .md session transcripts',
    load: async () => (await import('./commands/convert.js')).convertCommand,
  },
};
