import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { Agent, AgentEvent } from '../../src/agent/index.js';
import type { ChatAgentOptions, ChatBackend } from '../../src/chat/chat-backend.js';
import { createChatCommand } from '../../src/cli/commands/chat.js';
import type { Io } from '../../src/cli/io.js';
import type { Change } from '../../src/core/index.js';
import type { Message } from '../../src/core/messages.js';

let cwd: string;
beforeEach(async () => {
  cwd = await mkdtemp(join(tmpdir(), 'unstuck-chat-command-'));
});
afterEach(async () => {
  await rm(cwd, { recursive: true, force: true });
});

/** A stand-in agent that calls one tool (through the chat's real tools) and then answers. */
function fakeBackend(
  options: { call?: { name: string; arguments: string }; fail?: string; openChanges?: Change[] } = {},
): { backend: ChatBackend; seen: ChatAgentOptions[]; closed: string[] } {
  const seen: ChatAgentOptions[] = [];
  const closed: string[] = [];
  const backend: ChatBackend = {
    createStore: (path) => ({
      load: async () => ({ messages: [], problems: [] }),
      save: async () => undefined,
      close: async () => void closed.push(path),
    }),
    createAgent(agentOptions): Agent {
      seen.push(agentOptions);
      const messages: Message[] = [];
      return {
        messages,
        open: async () => ({ changes: options.openChanges ?? [], problems: [] }),
        async *runTurn(text): AsyncIterable<AgentEvent> {
          messages.push({ role: 'user', content: text });
          if (options.fail !== undefined) {
            yield { type: 'error', message: options.fail };
            yield { type: 'turn-end', reason: 'error' };
            return;
          }
          if (options.call !== undefined) {
            const tool = agentOptions.tools.find((candidate) => candidate.name === options.call!.name)!;
            yield { type: 'tool-call-start', id: 'c1', ...options.call };
            let result: string;
            let isError = false;
            try {
              result = await tool.run(JSON.parse(options.call.arguments), { signal: new AbortController().signal });
            } catch (error) {
              result = `Error: ${(error as Error).message}`;
              isError = true;
            }
            yield { type: 'tool-call-end', id: 'c1', name: options.call.name, result, isError };
          }
          yield { type: 'text-delta', text: `You said: ${text}` };
          yield { type: 'turn-end', reason: 'stop', usage: { promptTokens: 10, completionTokens: 3 } };
        },
      };
    },
  };
  return { backend, seen, closed };
}

function captureIo(env: Record<string, string>, stdinText?: string): { io: Io; out: () => string; err: () => string } {
  let out = '';
  let err = '';
  const stdin = new PassThrough() as PassThrough & { isTTY?: boolean };
  if (stdinText === undefined) stdin.isTTY = true;
  else stdin.end(stdinText);
  return {
    io: {
      stdout: { write: (text: string) => (out += text) },
      stderr: { write: (text: string) => (err += text) },
      stdin,
      env,
      cwd,
    },
    out: () => out,
    err: () => err,
  };
}

const key = { DEEPSEEK_API_KEY: 'sk-test' };

describe('unstuck chat (in process, over a stand-in agent)', () => {
  it('answers a one-shot prompt on stdout and exits 0, saving under .unstuck/sessions', async () => {
    const { backend, seen, closed } = fakeBackend();
    const { io, out, err } = captureIo(key);
    const code = await createChatCommand({ loadBackend: async () => backend }).run(
      { values: { prompt: 'hello' }, positionals: [] },
      io,
    );
    assert.equal(code, 0);
    assert.equal(out(), 'You said: hello\n');
    assert.equal(err(), '');
    assert.equal(seen[0]?.model, 'deepseek-chat');
    assert.equal(seen[0]?.profile, 'deepseek');
    assert.deepEqual(
      seen[0]?.tools.map((tool) => tool.name),
      ['read_file', 'list_directory', 'search_text', 'write_file', 'edit_file', 'run_command'],
    );
    assert.match(closed[0] ?? '', /\.unstuck\/sessions\/\d{8}-\d{6}-[0-9a-f]{4}\.md$/);
  });

  it('takes the prompt from stdin and prints JSON with --json', async () => {
    const { backend } = fakeBackend({ call: { name: 'read_file', arguments: '{"path":"a.txt"}' } });
    await writeFile(join(cwd, 'a.txt'), 'alpha');
    const { io, out } = captureIo(key, 'from stdin\n');
    const code = await createChatCommand({ loadBackend: async () => backend }).run(
      { values: { json: true }, positionals: [] },
      io,
    );
    assert.equal(code, 0);
    const report = JSON.parse(out()) as Record<string, unknown>;
    assert.equal(report.status, 'stop');
    assert.equal(report.answer, 'You said: from stdin\n');
    assert.deepEqual(report.toolCalls, [
      { id: 'c1', name: 'read_file', arguments: '{"path":"a.txt"}', result: 'alpha', isError: false },
    ]);
    assert.deepEqual(report.usage, { promptTokens: 10, completionTokens: 3 });
  });

  it('declines changes in one-shot without --yes, and makes them with it', async () => {
    const call = { name: 'write_file', arguments: '{"path":"out.txt","content":"made"}' };
    const declined = captureIo(key);
    await createChatCommand({ loadBackend: async () => fakeBackend({ call }).backend }).run(
      { values: { prompt: 'write', json: true }, positionals: [] },
      declined.io,
    );
    assert.match(
      String((JSON.parse(declined.out()) as { toolCalls: { result: string }[] }).toolCalls[0]?.result),
      /not allowed by the user \(run with --yes/,
    );
    await assert.rejects(readFile(join(cwd, 'out.txt')));
    const allowed = captureIo(key);
    await createChatCommand({ loadBackend: async () => fakeBackend({ call }).backend }).run(
      { values: { prompt: 'write', yes: true }, positionals: [] },
      allowed.io,
    );
    assert.equal(await readFile(join(cwd, 'out.txt'), 'utf8'), 'made');
  });

  it('exits 1 with one line on stderr when the turn fails', async () => {
    const { io, out, err } = captureIo(key);
    const code = await createChatCommand({
      loadBackend: async () => fakeBackend({ fail: 'cannot reach http://127.0.0.1:9 (connection refused)' }).backend,
    }).run({ values: { prompt: 'x' }, positionals: [] }, io);
    assert.equal(code, 1);
    assert.equal(out(), '');
    assert.equal(err(), 'unstuck chat: cannot reach http://127.0.0.1:9 (connection refused)\n');
  });

  it('says what opening a resumed session repaired', async () => {
    const first = captureIo(key);
    await createChatCommand({ loadBackend: async () => fakeBackend().backend }).run(
      { values: { prompt: 'one' }, positionals: [] },
      first.io,
    );
    const { mkdir } = await import('node:fs/promises');
    await mkdir(join(cwd, '.unstuck', 'sessions'), { recursive: true });
    await writeFile(join(cwd, '.unstuck', 'sessions', '20261130-000000-abcd.md'), '');
    const changes: Change[] = [
      { kind: 'message-moved', index: 1724, toolCallId: 'call_1', detail: 'moved the result next to its call' },
    ];
    const { io, err } = captureIo(key);
    const code = await createChatCommand({
      loadBackend: async () => fakeBackend({ openChanges: changes }).backend,
    }).run({ values: { prompt: 'two', resume: true }, positionals: ['20261130-000000-abcd'] }, io);
    assert.equal(code, 0);
    assert.equal(
      err(),
      'unstuck chat: session 20261130-000000-abcd was repaired: 1 change\n  - message 1724: message-moved: moved the result next to its call\n',
    );
  });

  it('rejects a stray argument and --json without a prompt as usage errors', async () => {
    const command = createChatCommand({ loadBackend: async () => fakeBackend().backend });
    await assert.rejects(
      command.run({ values: {}, positionals: ['hello'] }, captureIo(key).io),
      /unexpected argument 'hello' \(a prompt goes after -p\)/,
    );
    await assert.rejects(
      command.run({ values: { json: true }, positionals: [] }, captureIo(key).io),
      /--json needs a one-shot prompt/,
    );
    await assert.rejects(
      command.run({ values: { prompt: '  ' }, positionals: [] }, captureIo(key).io),
      /the prompt is empty/,
    );
  });
});
