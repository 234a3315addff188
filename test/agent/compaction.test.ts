import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SUMMARY_MARKER } from '../../src/agent/compact-history.js';
import type { AgentEvent } from '../../src/agent/index.js';
import type { Message } from '../../src/core/index.js';
import type { Emulator } from '../../src/emulator/index.js';
import { createEmulator } from '../../src/emulator/index.js';
import {
  agentFor,
  assertEveryRequestValid,
  assertValidHistory,
  collect,
  echoTool,
  recordingStore,
  userTexts,
} from './helpers.js';

/**
 * Compaction by summary in the runner, against the strict emulator. Requests that carry no tools
 * are the summarizer's: a router sends them to a second emulator, so each script stays simple and
 * both check every request they get.
 */
function emulators(): { main: Emulator; summarizer: Emulator; fetch: typeof fetch } {
  const main = createEmulator({ profile: 'deepseek' });
  const summarizer = createEmulator({ profile: 'deepseek' });
  const route: typeof fetch = async (input, init) => {
    const body = JSON.parse(String(init?.body ?? '{}')) as { tools?: unknown };
    return (body.tools === undefined ? summarizer : main).fetch(input, init);
  };
  return { main, summarizer, fetch: route };
}

const of = <T extends AgentEvent['type']>(events: AgentEvent[], type: T) =>
  events.filter((event): event is Extract<AgentEvent, { type: T }> => event.type === type);

async function turns(
  agent: ReturnType<typeof agentFor>,
  main: Emulator,
  count: number,
  from = 0,
): Promise<AgentEvent[]> {
  const all: AgentEvent[] = [];
  for (let turn = from; turn < from + count; turn += 1) {
    main.push(
      { toolCalls: [{ name: 'echo', arguments: JSON.stringify({ text: `turn ${turn} `.repeat(25) }) }] },
      { text: `answer ${turn} `.repeat(20) },
    );
    const events = await collect(agent.runTurn(`question ${turn} `.repeat(12)));
    assert.deepEqual(
      of(events, 'turn-end').map((event) => event.reason),
      ['stop'],
      JSON.stringify(of(events, 'error')),
    );
    all.push(...events);
  }
  return all;
}

function assertUnderWindow(emulator: Emulator, contextWindow: number): void {
  for (const [index, request] of emulator.requests.entries()) {
    // The emulator counts a prompt as its JSON characters / 4 (its usage.prompt_tokens).
    const tokens = Math.ceil(JSON.stringify(request.body).length / 4);
    assert.ok(tokens <= contextWindow, `request ${index}: ${tokens} tokens > window ${contextWindow}`);
  }
}

describe('compaction by summary', () => {
  test('past the threshold the oldest turns are summarized; requests carry the summary; the session keeps every message', async () => {
    const { main, summarizer, fetch } = emulators();
    summarizer.push({ text: 'The person asked twelve questions; each was echoed and answered.' });
    const store = recordingStore();
    const contextWindow = 4_000;
    const agent = agentFor(main, {
      tools: [echoTool],
      systemPrompt: 'You are a test agent.',
      contextWindow,
      reserveTokens: 500,
      session: store,
      fetch,
    });
    const events = await turns(agent, main, 14);
    const [start] = of(events, 'compaction-start');
    const [done] = of(events, 'compaction-end');
    assert.ok(start !== undefined && done !== undefined, 'compacted once');
    assert.equal(of(events, 'compaction-failed').length, 0);
    assert.ok(done.savedTokens > 0 && done.tokensAfter < done.tokensBefore, JSON.stringify(done));
    assert.equal(done.messages, start.messages);

    // The summarizer got the old turns as text, with no tools, in one valid request.
    assert.equal(summarizer.requests.length, 1);
    const asked = summarizer.requests[0]?.body;
    assert.equal(asked.tools, undefined);
    assert.match(asked.messages[1].content, /question 0 /);
    assert.match(asked.messages[1].content, /## result of echo/);

    // Requests after it carry the summary pair in place of the turns it covers, then whole turns.
    const after = main.requests.slice(
      main.requests.findIndex((request) => JSON.stringify(request.body.messages).includes(SUMMARY_MARKER)),
    );
    assert.ok(after.length > 0);
    for (const request of after) {
      const messages = request.body.messages as Message[];
      const at = messages.findIndex(
        (message) => typeof message.content === 'string' && message.content.startsWith(SUMMARY_MARKER),
      );
      assert.equal(at, 1, 'system prompt, then the summary');
      assert.match(String(messages[at]?.content), /each was echoed and answered/);
      assert.equal(messages[at + 1]?.role, 'assistant');
      assert.equal(messages[at + 2]?.role, 'user');
      assert.ok(!JSON.stringify(messages).includes('question 0 '), 'the summarized turns are not sent');
    }
    assertEveryRequestValid(main);
    assertEveryRequestValid(summarizer);
    assertUnderWindow(main, contextWindow);
    assertUnderWindow(summarizer, contextWindow);

    // Nothing lost: every user message is saved, and the summary pair is an addition.
    const saved = await store.current();
    assert.deepEqual(
      userTexts(saved).filter((text) => !text.startsWith(SUMMARY_MARKER)),
      Array.from({ length: 14 }, (_, turn) => `question ${turn} `.repeat(12)),
    );
    assert.equal(saved.filter((message) => String(message.content).startsWith(SUMMARY_MARKER)).length, 1);
    assertValidHistory(saved);

    // Resumed from the store, the runner still sends the summary, not the old turns.
    const resumed = agentFor(main, {
      tools: [echoTool],
      systemPrompt: 'You are a test agent.',
      contextWindow,
      reserveTokens: 500,
      session: store,
      fetch,
    });
    main.push({ text: 'resumed answer' });
    const next = await collect(resumed.runTurn('and now?'));
    assert.equal(of(next, 'turn-end')[0]?.reason, 'stop');
    const last = main.requests.at(-1)?.body.messages as Message[];
    assert.ok(String(last[1]?.content).startsWith(SUMMARY_MARKER));
    assert.ok(!JSON.stringify(last).includes('question 0 '));
    assert.equal(
      resumed.messages.length,
      saved.length + 2 + 2 * of(next, 'compaction-end').length,
      'the turn, and a summary pair if it compacted again',
    );
    assert.deepEqual(
      resumed.messages
        .slice(0, saved.length)
        .filter((message) => !String(message.content).startsWith(SUMMARY_MARKER) && message.role === 'user'),
      saved.filter((message) => !String(message.content).startsWith(SUMMARY_MARKER) && message.role === 'user'),
    );
  });

  test('a compaction that fails leaves the history and the session as they were, and the turn still answers', async () => {
    const { main, summarizer, fetch } = emulators();
    const store = recordingStore();
    const contextWindow = 4_000;
    const agent = agentFor(main, {
      tools: [echoTool],
      systemPrompt: 'You are a test agent.',
      contextWindow,
      reserveTokens: 500,
      session: store,
      fetch,
      retry: { maxRetries: 1, baseDelayMs: 1, maxDelayMs: 1 },
    });
    summarizer.push({ fault: { status: 503 } }, { fault: { status: 503 } }, { fault: { status: 503 } });
    let savedBefore: Message[] = [];
    let failed: AgentEvent | undefined;
    for (let turn = 0; turn < 14 && failed === undefined; turn += 1) {
      savedBefore = await store.current();
      const events = await turns(agent, main, 1, turn);
      failed = of(events, 'compaction-failed')[0];
      if (failed !== undefined) {
        assert.ok(of(events, 'retry').length >= 1, 'the summary request was retried like any other');
        assert.equal(of(events, 'compaction-end').length, 0);
      }
    }
    assert.ok(failed !== undefined && failed.type === 'compaction-failed');
    assert.match(failed.message, /HTTP 503.*the history is as it was/);
    const saved = await store.current();
    assert.ok(!JSON.stringify(saved).includes(SUMMARY_MARKER), 'no summary recorded');
    assert.deepEqual(saved.slice(0, savedBefore.length), savedBefore, 'the saved history only grew by the turn');
    assertEveryRequestValid(main);
  });

  test('a second compaction carries the first summary forward and covers the turns after it', async () => {
    const { main, summarizer, fetch } = emulators();
    summarizer.push(
      ...Array.from({ length: 12 }, (_, index) => ({ text: `SUMMARY #${index + 1} of the turns so far.` })),
    );
    const contextWindow = 4_000;
    const agent = agentFor(main, {
      tools: [echoTool],
      systemPrompt: 'You are a test agent.',
      contextWindow,
      reserveTokens: 500,
      fetch,
    });
    const events = await turns(agent, main, 30);
    assert.equal(of(events, 'compaction-end').length >= 2, true, `compactions: ${of(events, 'compaction-end').length}`);
    const compactions = of(events, 'compaction-end').length;
    const second = summarizer.requests[1]?.body.messages[1].content as string;
    assert.match(second, /SUMMARY #1 of the turns so far/);
    assert.ok(!second.includes(SUMMARY_MARKER), 'the summary pair itself is not re-read as conversation');
    const last = main.requests.at(-1)?.body.messages as Message[];
    assert.match(String(last[1]?.content), new RegExp(`SUMMARY #${compactions} of`));
    assert.equal(JSON.stringify(last).split(SUMMARY_MARKER).length - 1, 1, 'only the newest summary is sent');
    assert.equal(
      agent.messages.filter((message) => String(message.content).startsWith(SUMMARY_MARKER)).length,
      of(events, 'compaction-end').length,
    );
    assertEveryRequestValid(main);
    assertEveryRequestValid(summarizer);
    assertUnderWindow(main, contextWindow);
  });

  test('old turns too big for one summarizing request are read in parts, each carrying the summary so far', async () => {
    const { main, summarizer, fetch } = emulators();
    summarizer.push(...Array.from({ length: 20 }, (_, index) => ({ text: `PART SUMMARY ${index + 1}.` })));
    // A resumed session far over the window: its old turns take several requests to read.
    const initial: Message[] = [];
    for (let turn = 0; turn < 24; turn += 1) {
      initial.push({ role: 'user', content: `old question ${turn}` });
      initial.push({
        role: 'assistant',
        content: null,
        reasoning_content: 'look',
        tool_calls: [
          { id: `call_old_${turn}`, type: 'function', function: { name: 'echo', arguments: '{"text":"x"}' } },
        ],
      });
      initial.push({ role: 'tool', tool_call_id: `call_old_${turn}`, content: `old result ${turn} `.repeat(60) });
      initial.push({ role: 'assistant', content: `old answer ${turn}`, reasoning_content: 'done' });
    }
    const contextWindow = 4_000;
    const agent = agentFor(main, {
      tools: [echoTool],
      systemPrompt: 'You are a test agent.',
      contextWindow,
      reserveTokens: 500,
      fetch,
      session: recordingStore(initial),
    });
    main.push({ text: 'answer now' });
    const events = await collect(agent.runTurn('new question'));
    assert.equal(of(events, 'turn-end')[0]?.reason, 'stop', JSON.stringify(of(events, 'error')));
    assert.equal(of(events, 'compaction-end').length, 1);
    const parts = summarizer.requests.map((request) => request.body.messages[1].content as string);
    assert.ok(parts.length >= 2, `read in ${parts.length} part(s)`);
    parts.forEach((text, index) => {
      assert.match(text, new RegExp(`\\(part ${index + 1} of ${parts.length}\\)`));
      if (index > 0)
        assert.match(text, new RegExp(`Summary of the conversation so far:\\n\\nPART SUMMARY ${index}\\.`));
    });
    const last = main.requests.at(-1)?.body.messages as Message[];
    assert.match(
      String(last[1]?.content),
      new RegExp(`PART SUMMARY ${parts.length}\\.`),
      'the summary of the last part is the one kept',
    );
    assertEveryRequestValid(summarizer);
    assertUnderWindow(summarizer, contextWindow);
  });

  test('compact() on demand summarizes all but the newest turn; with one turn there is nothing to compact', async () => {
    const { main, summarizer, fetch } = emulators();
    const agent = agentFor(main, { tools: [echoTool], contextWindow: 100_000, fetch });
    await turns(agent, main, 1);
    const none = await collect(agent.compact!());
    assert.deepEqual(
      none.map((event) => event.type),
      ['compaction-failed'],
    );
    assert.match((none[0] as { message: string }).message, /nothing to compact/);
    await turns(agent, main, 2, 1);
    summarizer.push({ text: 'Two questions asked and answered.' });
    const events = await collect(agent.compact!());
    assert.deepEqual(
      events.map((event) => event.type),
      ['compaction-start', 'compaction-end'],
    );
    const summaryAt = agent.messages.findIndex((message) => String(message.content).startsWith(SUMMARY_MARKER));
    assert.equal(agent.messages[summaryAt + 2]?.content, `question 2 `.repeat(12), 'the newest turn stays verbatim');
    assert.equal(userTexts(agent.messages).length, 4);
    assertEveryRequestValid(summarizer);
  });
});

test('a summary no shorter than the turns it would replace is not recorded', async () => {
  const { main, summarizer, fetch } = emulators();
  const agent = agentFor(main, { tools: [echoTool], contextWindow: 100_000, fetch });
  for (const text of ['hi', 'and?']) {
    main.push({ text: 'ok' });
    await collect(agent.runTurn(text));
  }
  const before = [...agent.messages];
  summarizer.push({ text: 'A summary far longer than a two-word exchange. '.repeat(20) });
  const events = await collect(agent.compact!());
  assert.deepEqual(
    events.map((event) => event.type),
    ['compaction-start', 'compaction-failed'],
  );
  assert.match(
    (events[1] as { message: string }).message,
    /not shorter than the 2 messages it would replace; the history is as it was/,
  );
  assert.deepEqual(agent.messages, before);
});

test('a compaction whose save fails leaves the history as it was, and the turn goes on', async () => {
  const { main, summarizer, fetch } = emulators();
  const initial: Message[] = [];
  for (let turn = 0; turn < 24; turn += 1) {
    initial.push(
      { role: 'user', content: `old question ${turn}` },
      { role: 'assistant', content: `old answer ${turn} `.repeat(40) },
    );
  }
  const inner = recordingStore(initial);
  const store = { ...inner, save: async () => Promise.reject(new Error('disk full')) };
  summarizer.push({ text: 'short summary' });
  main.push({ text: 'answered anyway' });
  const agent = agentFor(main, { tools: [echoTool], contextWindow: 4_000, reserveTokens: 500, fetch, session: store });
  const events = await collect(agent.runTurn('new question'));
  const failed = of(events, 'compaction-failed')[0];
  assert.ok(failed !== undefined);
  assert.match(failed.message, /disk full.*the history is as it was/);
  assert.equal(of(events, 'turn-end')[0]?.reason, 'stop');
  assert.ok(
    !agent.messages.some((message) => String(message.content).startsWith(SUMMARY_MARKER)),
    'no summary in memory',
  );
  const saved = await inner.current();
  assert.ok(!saved.some((message) => String(message.content).startsWith(SUMMARY_MARKER)), 'no summary on disk');
  assert.deepEqual(saved.slice(0, initial.length), initial);
  assert.deepEqual(
    saved.slice(initial.length).map((message) => message.content),
    ['new question', 'answered anyway'],
  );
});
