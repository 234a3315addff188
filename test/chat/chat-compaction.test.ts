import assert from 'node:assert/strict';
import { access, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SUMMARY_MARKER } from '../../src/agent/compact-history.js';
import type { Message } from '../../src/core/index.js';
import { check } from '../../src/core/index.js';
import type { Emulator } from '../../src/emulator/index.js';
import { createEmulator } from '../../src/emulator/index.js';
import { listenOn } from '../../src/emulator/listen.js';
import { createTranscriptStore, formatTranscript } from '../../src/session/index.js';
import { buildPoisonedSession, POISONED_LENGTH } from './fixtures/poisoned-session.js';
import { cleanEnv, runChatBinary } from './harness/run-chat-binary.js';

/**
 * NexForgeCLI's case in `unstuck chat`: the 3,785-message session-122357 of NexForgeCLI 0.4.1 (a
 * terminal agent for DeepSeek, `nexforge-cli` on PyPI), resumed with a 128k-token window. The
 * chat's requests go to one emulator and the summarizer's (they carry no tools) to another, both
 * strict, behind one loopback server.
 */
let cwd: string;
before(async () => {
  cwd = await mkdtemp(join(tmpdir(), 'unstuck-chat-compaction-'));
});
after(async () => {
  await rm(cwd, { recursive: true, force: true });
});

async function withRouter<T>(work: (url: string, main: Emulator, summarizer: Emulator) => Promise<T>): Promise<T> {
  const main = createEmulator({ profile: 'deepseek' });
  const summarizer = createEmulator({ profile: 'deepseek' });
  const server = await listenOn(
    async (request) => {
      if (request.method !== 'POST') return main.handle(request);
      const text = await request.text();
      let tools: unknown;
      try {
        tools = (JSON.parse(text) as { tools?: unknown }).tools;
      } catch {
        tools = undefined;
      }
      return (tools === undefined ? summarizer : main).handle(
        new Request(request.url, { method: 'POST', headers: request.headers, body: text }),
      );
    },
    { port: 0, host: '127.0.0.1' },
  );
  try {
    return await work(`${server.url}/v1`, main, summarizer);
  } finally {
    await server.close();
  }
}

const WINDOW = 128_000;

function assertValidAndUnderWindow(emulator: Emulator, label: string): void {
  assert.ok(emulator.requests.length > 0, `${label}: saw requests`);
  for (const [index, request] of emulator.requests.entries()) {
    assert.deepEqual([request.status, request.violations], [200, []], `${label} request ${index}`);
    const tokens = Math.ceil(JSON.stringify(request.body).length / 4); // the emulator's own prompt_tokens
    assert.ok(tokens <= WINDOW, `${label} request ${index}: ${tokens} tokens over the ${WINDOW}-token window`);
  }
}

describe("unstuck chat keeps NexForgeCLI's session-122357 (3,785 messages) under its window", () => {
  it('resumes the 3,785-message session with a 128k window: compacts, answers, every request valid and under the window', async () => {
    const dir = join(cwd, 'seed');
    await mkdir(join(dir, '.unstuck', 'sessions'), { recursive: true });
    const seed = buildPoisonedSession();
    assert.equal(seed.length, POISONED_LENGTH);
    const file = join(dir, '.unstuck', 'sessions', 'session-122357.md');
    await writeFile(file, formatTranscript(seed));
    // Sent whole, the session alone is about 125k of the emulator's tokens: over 128k with the system prompt, tools and answer.
    assert.ok(JSON.stringify(seed).length / 4 > WINDOW - 8192);
    const env = cleanEnv({ OPENAI_API_KEY: 'sk-test', UNSTUCK_CONTEXT_WINDOW: String(WINDOW) });

    await withRouter(async (url, main, summarizer) => {
      for (let part = 1; part <= 6; part += 1)
        summarizer.push({
          text: `Summary ${part}: the person walked the agent through 44 tasks over src/module-*.ts; each file was read and judged fine.`,
        });
      main.push({ text: 'We are unstuck: the session is compacted and whole.' });
      const result = await runChatBinary(
        ['chat', '--resume', 'session-122357', '--base-url', url, '--profile', 'deepseek', '-p', 'Are we unstuck?'],
        { cwd: dir, env, timeoutMs: 120_000 },
      );
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, 'We are unstuck: the session is compacted and whole.\n');
      const line = /compacted ([\d,]+) messages into a summary: about ([\d,]+) -> ([\d,]+) tokens, ([\d,]+) saved/.exec(
        result.stderr,
      );
      assert.ok(line !== null, result.stderr);
      const [covered, before, after, saved] = line.slice(1).map((value) => Number(value.replaceAll(',', '')));
      assert.ok((covered as number) > 2000, `covered ${covered}`);
      assert.equal(saved, (before as number) - (after as number));
      assert.ok((after as number) < WINDOW / 2);

      assertValidAndUnderWindow(main, 'chat');
      assertValidAndUnderWindow(summarizer, 'summarizer');
      assert.equal(main.requests.length, 1);
      const sent = main.requests[0]?.body.messages as Message[];
      const first = sent.find((message) => message.role !== 'system');
      assert.ok(String(first?.content).startsWith(SUMMARY_MARKER), 'the system messages, then the summary');
      assert.match(String(first?.content), new RegExp(`Summary ${summarizer.requests.length}:`));
      assert.equal(sent.at(-1)?.content, 'Are we unstuck?');
    });

    // The session file keeps every message: the repaired session, the summary pair, the question and the answer.
    const stored = (await createTranscriptStore(file).load()).messages;
    assert.deepEqual(check(stored, { profile: 'deepseek', model: 'deepseek-chat' }), []);
    const originals = stored.filter(
      (message) => !(typeof message.content === 'string' && message.content.startsWith(SUMMARY_MARKER)),
    );
    assert.equal(stored.length - originals.length, 1, 'one summary recorded');
    assert.ok(originals.length >= POISONED_LENGTH + 1, `kept ${originals.length}`);
    for (const text of seed.filter((message) => message.role === 'user').map((message) => message.content)) {
      assert.ok(
        stored.some((message) => message.role === 'user' && message.content === text),
        `user message kept: ${String(text)}`,
      );
    }

    // Resumed again: the requests still carry the summary, not the turns it covers.
    await withRouter(async (url, main, summarizer) => {
      main.push({ text: 'Still whole.' });
      const result = await runChatBinary(
        ['chat', '--resume', 'session-122357', '--base-url', url, '--profile', 'deepseek', '-p', 'And now?'],
        { cwd: dir, env, timeoutMs: 120_000 },
      );
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, 'Still whole.\n');
      assert.equal(summarizer.requests.length, 0, 'no second compaction was needed');
      assertValidAndUnderWindow(main, 'chat');
      const sent = main.requests[0]?.body.messages as Message[];
      assert.ok(String(sent.find((message) => message.role !== 'system')?.content).startsWith(SUMMARY_MARKER));
      assert.ok(!JSON.stringify(sent).includes('Task 1: look at'), 'the summarized turns stay out');
    });
  });

  it('names a bad window setting in one line and writes nothing', async () => {
    const dir = join(cwd, 'bad-window');
    await mkdir(dir, { recursive: true });
    const result = await runChatBinary(['chat', '--base-url', 'http://127.0.0.1:9/v1', '-p', 'hi'], {
      cwd: dir,
      env: cleanEnv({ OPENAI_API_KEY: 'sk-test', UNSTUCK_CONTEXT_WINDOW: '12k' }),
    });
    assert.notEqual(result.code, 0);
    assert.equal(
      result.stderr,
      "unstuck chat: UNSTUCK_CONTEXT_WINDOW: expected a whole number of tokens, at least 1024, got '12k'\n",
    );
    assert.equal(result.stdout, '');
    await assert.rejects(access(join(dir, '.unstuck')), 'no session was started');
  });
});
