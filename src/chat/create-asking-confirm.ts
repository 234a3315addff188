import { visible } from './chat-renderer.js';
import type { TerminalStyle } from './terminal-style.js';
import type { ToolCallInfo } from './tool-call-context.js';
import { currentToolCall } from './tool-call-context.js';
import type { Confirm } from './tools/confirm.js';

/** Shows `text` and resolves with the line typed in answer ('' when the turn is aborted first). */
export type AskLine = (text: string, signal: AbortSignal) => Promise<string>;

/**
 * A `Confirm` that asks a person: "Allow write_file: create a.txt (5 bytes)? [y]es / [n]o / [a]lways".
 * The runner may start a block's read-only tools together, and starts calls before it reports them, so questions
 * wait a tick (the call lines print first) and are asked one after another; the renderer holds its
 * lines back while a question is open. "always" allows every later change of the chat.
 */
export function createAskingConfirm(options: {
  ask: AskLine;
  style: TerminalStyle;
  hold(): void;
  release(): void;
  allowAll?: boolean;
  preview?: (call: ToolCallInfo) => Promise<string[]>;
}): Confirm {
  let always = options.allowAll === true;
  let queue: Promise<unknown> = Promise.resolve();
  const askOne = async (
    request: { tool: string; action: string },
    signal: AbortSignal,
    call: ToolCallInfo | undefined,
  ): Promise<boolean> => {
    if (always) return true;
    if (signal.aborted) return false;
    // What will be written, before the question: the person allows a change they have seen.
    const preview =
      call === undefined || options.preview === undefined ? [] : await options.preview(call).catch(() => []);
    if (always) return true;
    if (signal.aborted) return false;
    options.hold();
    try {
      // The action holds the model's own text (a command, a path): shown with its control and
      // direction characters visible, so "\r\x1b[2KAllow run_command: run: ls" cannot pass for the question.
      const shown = preview
        .map(
          (line) =>
            `    ${line.startsWith('+') ? options.style.green(line) : line.startsWith('-') ? options.style.red(line) : options.style.dim(line)}\n`,
        )
        .join('');
      const word = (
        await options.ask(
          `${shown}${options.style.yellow(`Allow ${visible(request.tool)}: ${visible(request.action)}? [y]es / [n]o / [a]lways `)}`,
          signal,
        )
      )
        .trim()
        .toLowerCase();
      if (word === 'a' || word === 'always') always = true;
      return always || word === 'y' || word === 'yes';
    } finally {
      options.release();
    }
  };
  return (request, signal) => {
    const call = currentToolCall();
    const asked = queue
      .then(() => new Promise((resolve) => setImmediate(resolve)))
      .then(() => askOne(request, signal, call));
    queue = asked.catch(() => undefined);
    return asked;
  };
}
