import { createInterface } from 'node:readline';
import type { Message } from '../core/messages.js';
import { textOf } from '../core/messages.js';
import { previewChange } from './change-preview.js';
import type { ChatContext, SessionChoice } from './chat-context.js';
import type { ChatRenderer } from './chat-renderer.js';
import { createChatRenderer, visible } from './chat-renderer.js';
import { compactCommand } from './compact-command.js';
import type { AskLine } from './create-asking-confirm.js';
import { createAskingConfirm } from './create-asking-confirm.js';
import { appendInputHistory, loadInputHistory } from './input-history.js';
import { createMarkdownStream } from './markdown-stream.js';
import type { OpenedSession } from './open-chat-session.js';
import { openChatSession } from './open-chat-session.js';
import { describeOpenedSession } from './session-report.js';
import { readSessionTitle } from './session-title.js';
import { createSpinner } from './spinner.js';
import type { TerminalStyle } from './terminal-style.js';
import { colorWanted, createTerminalStyle } from './terminal-style.js';
import { withCallContext } from './tool-call-context.js';
import { createBuiltinTools } from './tools/builtin-tools.js';

/** How long leaving waits for an aborted turn to save before it goes anyway. */
const LEAVE_WAIT_MS = 3000;

const HELP = [
  '/new            start a new session',
  '/sessions       list the sessions of this directory',
  '/resume [id]    continue a session (the newest without an id)',
  '/output         show the whole output of the last tool calls',
  '/compact        summarize the older turns now (also done on its own near the context window)',
  '/exit           leave (Ctrl-D too)',
  'Ctrl-C aborts a running turn; a second Ctrl-C leaves.',
];

/**
 * The interactive chat on node:readline: a prompt with history, turns streamed as they run,
 * confirmation questions for changes, and the slash commands. Resolves with the exit code when
 * the person leaves; a running turn is aborted and its session closed first.
 */
export async function runInteractive(context: ChatContext, input: { session: SessionChoice }): Promise<number> {
  const { io, sessions, config } = context;
  const terminal = io.stdin.isTTY === true && io.stdout.isTTY === true;
  const style = createTerminalStyle(colorWanted(io.stdout, io.env));
  const out = io.stdout;
  const spinner = createSpinner(out, { enabled: terminal, unicode: style.enabled });
  // Answers as Markdown on a terminal; as they came when piped or with NO_COLOR.
  const markdown = style.enabled
    ? createMarkdownStream({ write: (text) => out.write(text), width: (out as { columns?: number }).columns ?? 80 })
    : undefined;
  const renderer = createChatRenderer({
    answer: out,
    notes: out,
    style,
    spinner,
    reasoning: true,
    fancy: style.enabled,
    terminal,
    ...(context.output === undefined ? {} : { output: context.output }),
    ...(markdown === undefined ? {} : { markdown }),
  });

  let pendingAnswer: ((line: string) => void) | undefined;
  // The question is answered by the next line readline emits (see the 'line' handler below).
  const ask: AskLine = (text, signal) =>
    new Promise<string>((resolve) => {
      const onAbort = (): void => {
        out.write('\n');
        answer('');
      };
      const answer = (line: string): void => {
        pendingAnswer = undefined;
        signal.removeEventListener('abort', onAbort);
        resolve(line);
      };
      out.write(text);
      pendingAnswer = answer;
      signal.addEventListener('abort', onAbort, { once: true });
    });
  const confirm = createAskingConfirm({
    ask,
    style,
    hold: () => renderer.hold(),
    release: () => renderer.release(),
    allowAll: context.yes,
    preview: (call) => previewChange(call, io.cwd),
  });
  const tools = withCallContext(createBuiltinTools({ root: io.cwd, confirm, env: io.env }));

  const open = async (choice: SessionChoice): Promise<OpenedSession> => {
    const entry = await sessions.select(choice);
    return await openChatSession({
      id: entry.id,
      path: entry.path,
      backend: context.backend,
      config,
      tools,
      fetch: context.fetch,
      cwd: io.cwd,
      env: io.env,
    });
  };

  let current = await open(input.session);
  const rl = createInterface({
    input: io.stdin,
    output: out as NodeJS.WritableStream,
    terminal,
    history: await loadInputHistory(io.cwd),
    historySize: 500,
    removeHistoryDuplicates: true,
    prompt: style.bold('> '),
  });
  announce(renderer, style, current, input.session.kind === 'resume', `${config.model} at ${config.baseURL}`, io.cwd);

  return await new Promise<number>((resolveExit) => {
    let turn: { controller: AbortController; done: Promise<void> } | undefined;
    let busy = false;
    let idleInterrupts = 0;
    let leaving = false;

    const leave = (code: number): void => {
      if (leaving) return;
      leaving = true;
      spinner.stop();
      const finish = async (): Promise<void> => {
        turn?.controller.abort();
        // The runner settles an aborted turn (cancelled results, a save) at once; never hang the exit on it.
        if (turn !== undefined)
          await Promise.race([turn.done, new Promise((resolve) => setTimeout(resolve, LEAVE_WAIT_MS).unref())]);
        await current.store.close().catch(() => undefined);
        rl.close();
        resolveExit(code);
      };
      void finish();
    };

    const prompt = (): void => {
      if (!leaving) rl.prompt();
    };

    const runTurn = async (text: string): Promise<void> => {
      const controller = new AbortController();
      const work = (async () => {
        renderer.waiting();
        for await (const event of current.agent.runTurn(text, { signal: controller.signal })) renderer.handle(event);
      })();
      turn = { controller, done: work.catch(() => undefined) };
      try {
        await work;
      } catch (error) {
        renderer.note(style.red(`error: ${(error as Error).message}`));
      } finally {
        turn = undefined;
        renderer.pause();
      }
    };

    const switchTo = async (choice: SessionChoice): Promise<void> => {
      // Release the writer lock first: `/resume` of the session already open must not wait for it.
      // A closed store takes the lock again on its next save, so a failed switch leaves `current` usable.
      await current.store.close().catch(() => undefined);
      const next = await open(choice);
      current = next;
      announce(renderer, style, current, choice.kind === 'resume', undefined, io.cwd);
    };

    const command = async (line: string): Promise<void> => {
      const [name, ...rest] = line.split(/\s+/);
      const argument = rest.join(' ').trim();
      switch (name) {
        case '/exit':
        case '/quit':
          leave(0);
          return;
        case '/new':
          await switchTo({ kind: 'new' });
          return;
        case '/resume':
          await switchTo(argument === '' ? { kind: 'resume' } : { kind: 'resume', id: argument });
          return;
        case '/compact': {
          // Like a turn: Ctrl-C aborts it, and an aborted compaction leaves the session as it was.
          const controller = new AbortController();
          const work = compactCommand(current.agent, renderer, controller.signal);
          turn = { controller, done: work.catch(() => undefined) };
          try {
            await work;
          } finally {
            turn = undefined;
          }
          return;
        }
        case '/sessions': {
          const entries = await sessions.list();
          if (entries.length === 0) renderer.note('no saved sessions yet');
          for (const entry of entries) {
            const mark = entry.id === current.id ? '*' : ' ';
            const title = await readSessionTitle(entry.path);
            renderer.note(
              `${mark} ${entry.id}  ${entry.modified.toISOString().slice(0, 16).replace('T', ' ')}  ${formatBytes(entry.bytes).padStart(8)}${title === undefined ? '' : `  ${visible(title)}`}`,
            );
          }
          return;
        }
        case '/output': {
          const outputs = renderer.lastOutputs();
          if (outputs.length === 0) renderer.note('no tool output yet in this chat');
          for (const { name, result } of outputs) {
            renderer.note(style.cyan(`${name}:`));
            for (const text of result.replace(/\n$/, '').split('\n')) renderer.note(`  ${visible(text)}`);
          }
          return;
        }
        case '/help':
          for (const text of HELP) renderer.note(text);
          return;
        default:
          renderer.note(`unknown command ${name ?? ''} (try /help)`);
      }
    };

    rl.on('line', (line) => {
      if (pendingAnswer !== undefined) {
        // An answer to a question is not something to recall with the arrow keys.
        const history = (rl as unknown as { history?: string[] }).history;
        if (history?.[0] === line) history.shift();
        pendingAnswer(line);
        return;
      }
      if (busy || leaving) return;
      idleInterrupts = 0;
      const text = line.trim();
      if (text === '') {
        prompt();
        return;
      }
      busy = true;
      void appendInputHistory(io.cwd, text);
      const work = text.startsWith('/') ? command(text) : runTurn(text);
      work
        .catch((error: unknown) => renderer.note(style.red(`error: ${(error as Error).message.split('\n')[0]}`)))
        .finally(() => {
          busy = false;
          prompt();
        });
    });

    rl.on('SIGINT', () => {
      if (turn !== undefined) {
        if (turn.controller.signal.aborted) {
          leave(130);
          return;
        }
        renderer.pause();
        turn.controller.abort();
        // This Ctrl-C counts: one more at the prompt leaves, unless something is typed first.
        idleInterrupts = 1;
        return;
      }
      if (rl.line !== '') {
        // Clear the half-typed line, as shells do.
        rl.write(null, { ctrl: true, name: 'e' });
        rl.write(null, { ctrl: true, name: 'u' });
        return;
      }
      idleInterrupts += 1;
      if (idleInterrupts >= 2) {
        leave(130);
        return;
      }
      out.write('\n');
      renderer.note(style.dim('(press Ctrl-C again to leave, or type /exit)'));
      prompt();
    });

    rl.on('close', () => leave(0));
    io.signal?.addEventListener('abort', () => leave(143), { once: true });
    prompt();
  });
}

function announce(
  renderer: ChatRenderer,
  style: TerminalStyle,
  session: OpenedSession,
  resumed: boolean,
  where: string | undefined,
  cwd: string,
): void {
  const count = session.agent.messages.length;
  const head = resumed ? `resumed session ${session.id} (${count} messages)` : `new session ${session.id}`;
  renderer.note(style.dim(`${head}${where === undefined ? '' : ` · ${where}`} · /help for commands`));
  for (const line of describeOpenedSession(session, cwd)) renderer.note(style.yellow(line));
  if (resumed) for (const line of lastExchange(session.agent.messages)) renderer.note(style.dim(line));
}

/** Where a resumed conversation left off: its last question and last answer, one line each. */
function lastExchange(messages: readonly Message[]): string[] {
  const lines: string[] = [];
  const question = messages.findLast((message) => message.role === 'user' && textOf(message.content).trim() !== '');
  const answer = messages.findLast((message) => message.role === 'assistant' && textOf(message.content).trim() !== '');
  if (question !== undefined) lines.push(`  you: ${oneLine(textOf(question.content))}`);
  if (answer !== undefined) lines.push(`  model: ${oneLine(textOf(answer.content))}`);
  return lines;
}

function oneLine(text: string, limit = 100): string {
  const flat = visible(text.replace(/\s+/g, ' ').trim());
  return flat.length <= limit ? flat : `${flat.slice(0, limit - 3)}...`;
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
