import type { AgentEvent, Tool } from '../agent/index.js';
import type { Change } from '../core/index.js';
import { createTerminalAsk } from './ask-on-terminal.js';
import { previewChange } from './change-preview.js';
import type { ChatContext, SessionChoice } from './chat-context.js';
import { createChatRenderer } from './chat-renderer.js';
import { createAskingConfirm } from './create-asking-confirm.js';
import { openChatSession } from './open-chat-session.js';
import { describeOpenedSession, formatProblem } from './session-report.js';
import { createSpinner } from './spinner.js';
import { colorWanted, createTerminalStyle } from './terminal-style.js';
import { withCallContext } from './tool-call-context.js';
import { createBuiltinTools } from './tools/builtin-tools.js';
import { allowAll, denyAll } from './tools/confirm.js';

/** Exit codes of a one-shot chat. */
export const CHAT_EXIT = { ok: 0, failed: 1, aborted: 130 } as const;

interface ToolCallRecord {
  id: string;
  name: string;
  arguments: string;
  result?: string;
  isError?: boolean;
}

/**
 * `unstuck chat -p "..."`: one turn, the answer on stdout (or one JSON object with `--json`),
 * everything else on stderr; exit 0 when the turn ended normally, 1 when it failed.
 * Without `--yes`, a person at a terminal is asked before each change; without one to ask
 * (stdin not a terminal, or `--json`), changes are declined and the model is told so.
 */
export async function runOneShot(
  context: ChatContext,
  input: { prompt: string; session: SessionChoice; json: boolean },
): Promise<number> {
  const { io, sessions } = context;
  const entry = await sessions.select(input.session);
  const style = createTerminalStyle(colorWanted(io.stderr, io.env));
  const notes = { write: (text: string) => io.stderr.write(text) };
  // Tool output is previewed for a person watching stderr; a script reading stderr gets the call lines only.
  const renderer = input.json
    ? undefined
    : createChatRenderer({
        answer: io.stdout,
        notes,
        style,
        spinner: createSpinner(notes, { enabled: io.stderr.isTTY === true, unicode: style.enabled }),
        reasoning: false,
        fancy: style.enabled,
        terminal: io.stdout.isTTY === true,
        output: context.output ?? (io.stderr.isTTY === true ? 'preview' : 'none'),
        moreHint: '--full-output shows them all',
      });
  // A person at a terminal is asked; a script (stdin not a terminal, or --json) is not: changes are declined.
  const confirm = context.yes
    ? allowAll
    : io.stdin.isTTY === true && !input.json
      ? createAskingConfirm({
          ask: createTerminalAsk(io.stdin, io.stderr),
          style,
          hold: () => renderer?.hold(),
          release: () => renderer?.release(),
          preview: (call) => previewChange(call, io.cwd),
        })
      : denyAll;
  const tools: Tool[] = withCallContext(createBuiltinTools({ root: io.cwd, confirm, env: io.env }));
  const session = await openChatSession({
    id: entry.id,
    path: entry.path,
    backend: context.backend,
    config: context.config,
    tools,
    fetch: context.fetch,
    cwd: io.cwd,
    env: io.env,
  });
  if (renderer !== undefined)
    for (const line of describeOpenedSession(session, io.cwd))
      renderer.note(line.startsWith(' ') ? line : `unstuck chat: ${line}`);

  const controller = new AbortController();
  const onStop = (): void => controller.abort();
  io.signal?.addEventListener('abort', onStop, { once: true });
  let answer = '';
  let reasoning = '';
  let endedWith: Extract<AgentEvent, { type: 'turn-end' }> | undefined;
  const errors: string[] = [];
  const repairs: Change[] = [];
  const toolCalls: ToolCallRecord[] = [];
  try {
    renderer?.waiting();
    for await (const event of session.agent.runTurn(input.prompt, { signal: controller.signal })) {
      switch (event.type) {
        case 'text-delta':
          answer += event.text;
          break;
        case 'reasoning-delta':
          reasoning += event.text;
          break;
        case 'tool-call-start':
          toolCalls.push({ id: event.id, name: event.name, arguments: event.arguments });
          break;
        case 'tool-call-end': {
          const call = toolCalls.find((candidate) => candidate.id === event.id && candidate.result === undefined);
          if (call !== undefined) Object.assign(call, { result: event.result, isError: event.isError });
          break;
        }
        case 'repair':
          repairs.push(...event.changes);
          break;
        case 'error':
          errors.push(event.message);
          break;
        case 'turn-end':
          endedWith = event;
          break;
        case 'retry':
        case 'compact':
          break;
      }
      if (event.type === 'error') {
        renderer?.pause();
        if (renderer !== undefined) io.stderr.write(`unstuck chat: ${event.message}\n`);
      } else if (event.type === 'retry' && io.stderr.isTTY !== true) {
        // A script reads stderr for the outcome: the final error line says it all.
      } else {
        renderer?.handle(event);
      }
    }
  } finally {
    io.signal?.removeEventListener('abort', onStop);
    await session.store.close().catch(() => undefined);
  }
  const reason = endedWith?.reason ?? 'error';
  if (endedWith === undefined && errors.length === 0) errors.push('the turn ended without an answer');
  if (input.json) {
    const report = {
      session: session.id,
      status: reason,
      answer,
      ...(reasoning === '' ? {} : { reasoning }),
      toolCalls,
      opened: { repairs: session.changes, problems: session.problems.map((problem) => formatProblem(problem, io.cwd)) },
      repairs,
      ...(errors.length === 0 ? {} : { error: errors.join('; ') }),
      ...(endedWith?.usage === undefined ? {} : { usage: endedWith.usage }),
    };
    io.stdout.write(`${JSON.stringify(report)}\n`);
  } else if (endedWith === undefined && errors.length > 0) {
    io.stderr.write(`unstuck chat: ${errors.join('; ')}\n`);
  }
  if (reason === 'stop') return CHAT_EXIT.ok;
  return reason === 'aborted' ? CHAT_EXIT.aborted : CHAT_EXIT.failed;
}
