import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { isProfileName, profileNames, UnstuckError } from '../../core/index.js';
import type { Step, WireName } from '../../emulator/index.js';
import { createEmulator, parseScript } from '../../emulator/index.js';
import type { Command } from '../command.js';
import { EXIT } from '../command.js';

export const emulateCommand: Command = {
  name: 'emulate',
  summary: 'Run a strict provider emulator on loopback: checks every request, answers from a script',
  positionals: '',
  options: {
    profile: { type: 'string' },
    port: { type: 'string' },
    host: { type: 'string' },
    script: { type: 'string' },
    thinking: { type: 'boolean' },
  },
  optionHelp: {
    profile: `Provider the chat wire plays: ${profileNames.join(', ')} (default deepseek); /v1/messages always plays Anthropic, /v1/responses OpenAI Responses, …/models/{model}:generateContent Gemini`,
    port: 'Port to listen on (default 0: any free port; the URL is printed)',
    host: 'Address to bind (default 127.0.0.1)',
    script: 'JSON file of steps to answer with (default: every request gets "ok")',
    thinking: 'Check requests as thinking mode unless the body says otherwise',
  },
  async run({ values }, io) {
    const profile = (values['profile'] as string | undefined) ?? 'deepseek';
    if (!isProfileName(profile)) {
      io.stderr.write(`unstuck emulate: unknown profile '${profile}' (known: ${profileNames.join(', ')})\n`);
      return EXIT.usage;
    }
    const portText = (values['port'] as string | undefined) ?? '0';
    const port = Number(portText);
    if (!/^\d+$/.test(portText) || port > 65535) {
      io.stderr.write(`unstuck emulate: --port must be a number from 0 to 65535, got '${portText}'\n`);
      return EXIT.usage;
    }
    const host = (values['host'] as string | undefined) ?? '127.0.0.1';
    const scriptFile = values['script'] as string | undefined;
    const script = scriptFile === undefined ? [] : await readScript(resolve(io.cwd, scriptFile), scriptFile);

    const emulator = createEmulator({
      profile,
      script,
      ...(values['thinking'] === true ? { thinking: true } : {}),
      onRequest: (request) => {
        const first = request.violations[0];
        io.stderr.write(
          `${request.path} ${request.status}${first === undefined ? '' : ` ${first.rule} ${HISTORY_FIELD[request.wire]}.${first.index}`}\n`,
        );
      },
    });
    let server: Awaited<ReturnType<typeof emulator.listen>>;
    try {
      server = await emulator.listen({ port, host });
    } catch (error) {
      throw new UnstuckError('IO', `cannot listen on ${host}:${port}: ${(error as Error).message}`, { cause: error });
    }
    io.stdout.write(
      `unstuck emulate: ${profile} emulator listening on ${server.url} (POST /v1/chat/completions; Anthropic: POST /v1/messages, /v1/messages/count_tokens; Responses: POST /v1/responses, /v1/responses/compact; Gemini: POST /v1beta/models/{model}:generateContent, :streamGenerateContent, :countTokens)\n`,
    );
    await new Promise<void>((done) => {
      if (io.signal === undefined) return;
      if (io.signal.aborted) done();
      else io.signal.addEventListener('abort', () => done(), { once: true });
    });
    await server.close();
    return EXIT.ok;
  },
};

/** Where each wire keeps its history, for the log's `rule field.index` (the key in a Gemini `?key=` is never logged: only the path is). */
const HISTORY_FIELD: Record<WireName, string> = {
  chat: 'messages',
  anthropic: 'messages',
  responses: 'input',
  gemini: 'contents',
};

async function readScript(path: string, shown: string): Promise<Step[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new UnstuckError(
      'IO',
      `cannot read the script: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      { file: shown, cause: error },
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UnstuckError('INPUT_INVALID', `the script is not JSON: ${(error as Error).message}`, {
      file: shown,
      cause: error,
    });
  }
  return parseScript(value, shown);
}
