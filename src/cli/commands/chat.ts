import { createTerminalAsk } from '../../chat/ask-on-terminal.js';
import { createProjectTrustAsk } from '../../chat/ask-project-trust.js';
import type { ChatBackend } from '../../chat/chat-backend.js';
import { loadChatBackend } from '../../chat/chat-backend.js';
import type { TrustMode } from '../../chat/chat-config.js';
import { formatConfigWarning, loadChatConfig } from '../../chat/chat-config.js';
import type { ChatContext, SessionChoice } from '../../chat/chat-context.js';
import { compactionSettings } from '../../chat/compaction-settings.js';
import { explainNetworkErrors } from '../../chat/explain-network-error.js';
import { createKnownSessions } from '../../chat/known-sessions.js';
import { runInteractive } from '../../chat/run-interactive.js';
import { runOneShot } from '../../chat/run-one-shot.js';
import { createSessionDirectory } from '../../chat/session-directory.js';
import { colorWanted, createTerminalStyle } from '../../chat/terminal-style.js';
import { CHAT_COMMAND_MARKER, namesToErase } from '../../chat/tools/command-environment.js';
import { userConfigDirectory } from '../../chat/user-config-directory.js';
import { UnstuckError } from '../../core/errors.js';
import type { Command } from '../command.js';
import { eraseInitialEnvironment } from '../erase-initial-environment.js';
import type { Io } from '../io.js';
import { createStoreSessionDirectory, withStoreUrl } from '../store-session-directory.js';

/** The chat command, with the layers it composes passed in, so tests can run it over fakes. */
export function createChatCommand(
  dependencies: { loadBackend: () => Promise<ChatBackend>; fetch?: typeof fetch } = { loadBackend: loadChatBackend },
): Command {
  return {
    name: 'chat',
    summary: 'A terminal agent for DeepSeek or any OpenAI-compatible model, whose sessions never get stuck',
    positionals: '[SESSION-ID]',
    options: {
      prompt: { type: 'string', short: 'p' },
      json: { type: 'boolean' },
      resume: { type: 'boolean', short: 'r' },
      model: { type: 'string', short: 'm' },
      'base-url': { type: 'string' },
      profile: { type: 'string' },
      thinking: { type: 'boolean' },
      yes: { type: 'boolean', short: 'y' },
      'trust-project': { type: 'boolean' },
      'full-output': { type: 'boolean' },
      store: { type: 'string' },
    },
    optionHelp: {
      prompt: 'Ask once, print the answer and exit (the prompt may also come on stdin)',
      json: 'With a one-shot prompt: print one JSON object (answer, tool calls, repairs, status)',
      resume: 'Continue a session of .unstuck/sessions/: SESSION-ID, or the newest',
      model: 'Model name (default deepseek-chat, or "model" in your config or a trusted .unstuck/config.json)',
      'base-url': 'OpenAI-compatible endpoint; the key then comes from OPENAI_API_KEY',
      profile: 'Provider rules to keep the history valid for (default: guessed from the URL)',
      thinking: 'Ask for thinking mode (DeepSeek reasoning)',
      yes: 'Write files and run commands without asking',
      'full-output': 'Show each tool result whole under its call (default: its first and last lines)',
      'trust-project':
        'Trust .unstuck/config.json as it is now (its endpoint, model, system prompt); remembered until it changes',
      store: 'Keep sessions in a database: sqlite:PATH or postgres://USER@HOST:PORT/DB (password from PGPASSWORD)',
    },
    async run({ values, positionals }, io) {
      return await runChat(values, positionals, io, dependencies);
    },
  };
}

async function runChat(
  values: Record<string, string | boolean | string[] | boolean[] | undefined>,
  positionals: string[],
  io: Io,
  dependencies: { loadBackend: () => Promise<ChatBackend>; fetch?: typeof fetch },
): Promise<number> {
  const resume = values.resume === true;
  if (positionals.length > (resume ? 1 : 0)) {
    throw new UnstuckError(
      'USAGE',
      resume
        ? 'at most one session id after --resume'
        : `unexpected argument '${positionals[0] ?? ''}' (a prompt goes after -p)`,
    );
  }
  const session: SessionChoice = resume
    ? positionals[0] === undefined
      ? { kind: 'resume' }
      : { kind: 'resume', id: positionals[0] }
    : { kind: 'new' };
  const json = values.json === true;
  let prompt = typeof values.prompt === 'string' ? values.prompt : undefined;
  if (prompt === undefined && io.stdin.isTTY !== true) prompt = await readAll(io.stdin);
  if (prompt !== undefined && prompt.trim() === '')
    throw new UnstuckError('USAGE', 'the prompt is empty (pass -p TEXT or pipe a prompt on stdin)');
  if (json && prompt === undefined)
    throw new UnstuckError('USAGE', '--json needs a one-shot prompt (-p TEXT or stdin)');

  const flags = {
    ...(typeof values.model === 'string' ? { model: values.model } : {}),
    ...(typeof values['base-url'] === 'string' ? { baseURL: values['base-url'] } : {}),
    ...(typeof values.profile === 'string' ? { profile: values.profile } : {}),
    ...(values.thinking === true ? { thinking: true } : {}),
  };
  if (values['trust-project'] === true && nonEmpty(io.env[CHAT_COMMAND_MARKER])) {
    throw new UnstuckError(
      'USAGE',
      '--trust-project is refused in a command that unstuck chat runs: trust a project from your own shell',
    );
  }
  // A project file's endpoint, model and system prompt count only once trusted: asked in the
  // interactive chat, never taken silently by a one-shot run (see docs/decisions/chat-project-trust.md).
  const trust: TrustMode =
    values['trust-project'] === true
      ? { mode: 'grant' }
      : prompt === undefined
        ? {
            mode: 'ask',
            ask: createProjectTrustAsk({
              ask: createTerminalAsk(io.stdin, io.stdout),
              style: createTerminalStyle(colorWanted(io.stdout, io.env)),
              write: (text) => io.stdout.write(text),
            }),
          }
        : { mode: 'never' };
  const { config, warnings, notes } = await loadChatConfig({ flags, env: io.env, cwd: io.cwd, trust });
  for (const warning of warnings) io.stderr.write(`unstuck chat: warning: ${formatConfigWarning(warning)}\n`);
  for (const note of notes) io.stderr.write(`unstuck chat: ${note}\n`);
  // The key is in `config` now: out of the environment, and out of the block /proc/<pid>/environ
  // shows, so no command the model runs can read it there (docs/decisions/chat-command-environment.md).
  // A database store still needs its password (PGPASSWORD) after that: it reads a copy of the environment as it was.
  const storeIo = typeof values.store === 'string' ? { ...io, env: { ...io.env } } : io;
  if (io.env === process.env) {
    const { remove, hide } = namesToErase(io.env, PROVIDER_KEYS);
    eraseInitialEnvironment(remove, io.env, hide);
  }
  compactionSettings({ profile: config.profile, contextWindow: config.contextWindow, env: io.env }); // a bad setting stops here, before a session is made
  const context: ChatContext = {
    io,
    config,
    backend:
      typeof values.store === 'string'
        ? withStoreUrl(await dependencies.loadBackend(), storeIo)
        : await dependencies.loadBackend(),
    sessions:
      typeof values.store === 'string'
        ? createStoreSessionDirectory(values.store, storeIo)
        : createSessionDirectory(io.cwd, { known: createKnownSessions(userConfigDirectory(io.env)) }),
    fetch: explainNetworkErrors(dependencies.fetch ?? globalThis.fetch),
    yes: values.yes === true,
    ...(values['full-output'] === true ? { output: 'full' as const } : {}),
  };
  if (prompt !== undefined) return await runOneShot(context, { prompt, session, json });
  return await runInteractive(context, { session });
}

const PROVIDER_KEYS = ['DEEPSEEK_API_KEY', 'OPENAI_API_KEY'];

function nonEmpty(value: string | undefined): boolean {
  return value !== undefined && value !== '';
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}

export const chatCommand: Command = createChatCommand();
