import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  AIMessage,
  type BaseMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
  trimMessages,
} from '@langchain/core/messages';
import { seedShapedHistory } from '../../bench/support/seed-history.js';
import {
  check,
  createTokenEstimator,
  type FormatName,
  isUnstuckError,
  type Message,
  serializedChars,
  TRIMMED_RESULT,
  trim,
} from '../../src/index.js';

const big = (label: string, size: number) => `${label} ${'x'.repeat(size)}`;

/** The same conversation in LangChain's classes and on the OpenAI chat wire. */
function conversation(): { langchain: BaseMessage[]; wire: Message[] } {
  const wire: Message[] = [
    { role: 'system', content: 'You are a coding agent.' },
    { role: 'user', content: 'Why does the build fail?' },
    {
      role: 'assistant',
      content: big('I will read the config first, because', 2000),
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"tsconfig.json"}' } },
      ],
    },
    { role: 'tool', tool_call_id: 'call_1', content: '{"module":"NodeNext"}' },
    { role: 'assistant', content: 'The module setting is NodeNext; the import lacks its .js extension.' },
  ];
  const langchain: BaseMessage[] = [
    new SystemMessage('You are a coding agent.'),
    new HumanMessage('Why does the build fail?'),
    new AIMessage({
      content: big('I will read the config first, because', 2000),
      tool_calls: [{ id: 'call_1', name: 'read_file', args: { path: 'tsconfig.json' }, type: 'tool_call' }],
    }),
    new ToolMessage({ tool_call_id: 'call_1', content: '{"module":"NodeNext"}' }),
    new AIMessage('The module setting is NodeNext; the import lacks its .js extension.'),
  ];
  return { langchain, wire };
}

function toWire(messages: BaseMessage[]): Message[] {
  return messages.map((message): Message => {
    const type = message.getType();
    const content = typeof message.content === 'string' ? message.content : JSON.stringify(message.content);
    if (type === 'system') return { role: 'system', content };
    if (type === 'human') return { role: 'user', content };
    if (type === 'tool') return { role: 'tool', tool_call_id: (message as ToolMessage).tool_call_id, content };
    const calls = (message as AIMessage).tool_calls ?? [];
    return {
      role: 'assistant',
      content,
      ...(calls.length > 0
        ? {
            tool_calls: calls.map((call) => ({
              id: call.id ?? '',
              type: 'function',
              function: { name: call.name, arguments: JSON.stringify(call.args) },
            })),
          }
        : {}),
    };
  });
}

test("LangChain's trimMessages({ strategy: 'last' }) leaves an orphan tool message where trim does not", async () => {
  const { langchain, wire } = conversation();
  const chars = (messages: BaseMessage[]) =>
    messages.reduce((sum, message) => sum + (typeof message.content === 'string' ? message.content.length : 0), 0);
  // A budget that holds the newest two messages and the system message, not the long call before them.
  const theirs = await trimMessages(langchain, {
    strategy: 'last',
    maxTokens: 400,
    tokenCounter: chars,
    includeSystem: true,
  });
  const theirsOnTheWire = toWire(theirs);
  assert.deepEqual(
    theirsOnTheWire.map((message) => message.role),
    ['system', 'tool', 'assistant'],
  );
  assert.deepEqual(
    check(theirsOnTheWire).map((violation) => violation.rule),
    ['tool-result-orphan'],
  );

  const estimator = createTokenEstimator({ charsPerToken: 1 });
  const ours = trim(wire, {
    maxTokens: estimator.tokens(wire.slice(3)) + estimator.tokens(wire.slice(0, 2)),
    estimator,
  });
  assert.deepEqual(check(ours.items), []);
  assert.deepEqual(
    ours.items.map((message) => message.role),
    ['system', 'user', 'assistant'],
  );
  assert.deepEqual(ours.omitted, [2, 3], 'the call and its result go together, and are named');
  assert.equal(ours.items[2], wire[4]);
  assert.ok(ours.fits);
});

test('trim keeps the leading system messages and the newest whole turns', () => {
  const history: Message[] = [
    { role: 'system', content: 'rules' },
    { role: 'developer', content: 'more rules' },
    { role: 'user', content: big('first question', 300) },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } },
        { id: 'b', type: 'function', function: { name: 'g', arguments: '{}' } },
      ],
    },
    { role: 'tool', tool_call_id: 'a', content: big('result a', 300) },
    { role: 'tool', tool_call_id: 'b', content: big('result b', 300) },
    { role: 'assistant', content: 'first answer' },
    { role: 'user', content: 'second question' },
    { role: 'assistant', content: 'second answer' },
  ];
  const estimator = createTokenEstimator({ charsPerToken: 1 });
  const keptChars = [0, 1, 7, 8].reduce((sum, index) => sum + serializedChars(history[index]), 0);
  const result = trim(history, { maxTokens: keptChars, estimator });
  assert.deepEqual(result.omitted, [2, 3, 4, 5, 6]);
  assert.deepEqual(result.items, [history[0], history[1], history[7], history[8]]);
  assert.equal(result.estimatedTokens, keptChars);
  assert.equal(
    result.savedTokens,
    [2, 3, 4, 5, 6].reduce((sum, index) => sum + serializedChars(history[index]), 0),
  );
  assert.equal(result.fits, true);
  // One token less and the second turn alone does not fit: its opening message and newest step stay.
  const tight = trim(history, { maxTokens: keptChars - 1, estimator });
  assert.deepEqual(tight.items, [history[0], history[1], history[7], history[8]]);
  assert.equal(tight.fits, false);
});

test('when the newest turn alone is over, its opening message and newest whole steps are kept', () => {
  const call = (id: string): Message => ({
    role: 'assistant',
    content: null,
    tool_calls: [{ id, type: 'function', function: { name: 'read', arguments: '{}' } }],
  });
  const history: Message[] = [
    { role: 'user', content: 'fix it' },
    call('1'),
    { role: 'tool', tool_call_id: '1', content: big('one', 800) },
    call('2'),
    { role: 'tool', tool_call_id: '2', content: big('two', 50) },
    { role: 'assistant', content: 'done' },
  ];
  const estimator = createTokenEstimator({ charsPerToken: 1 });
  const budget = [0, 3, 4, 5].reduce((sum, index) => sum + serializedChars(history[index]), 0);
  const result = trim(history, { maxTokens: budget, estimator });
  assert.deepEqual(result.omitted, [1, 2]);
  assert.deepEqual(check(result.items), []);
  assert.equal(result.fits, true);
});

test('placeholder mode clears the oldest results first and keeps the newest ones', () => {
  const history: Message[] = [{ role: 'user', content: 'go' }];
  for (let index = 0; index < 6; index += 1) {
    history.push({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: `c${index}`, type: 'function', function: { name: 'read', arguments: '{}' } }],
    });
    history.push({ role: 'tool', tool_call_id: `c${index}`, content: big(`result ${index}`, 500) });
  }
  history.push({ role: 'assistant', content: 'done' });
  const estimator = createTokenEstimator({ charsPerToken: 1 });
  const total = estimator.tokens(history);
  const result = trim(history, { maxTokens: total - 1200, estimator, mode: 'placeholder', keepToolResults: 2 });
  assert.deepEqual(result.cleared, [2, 4, 6]);
  for (const index of result.cleared) assert.equal(result.items[index]?.content, TRIMMED_RESULT);
  assert.equal(result.items.length, history.length);
  assert.deepEqual(check(result.items), []);
  assert.ok(result.fits);
  // Asked for less than the protected results allow: everything older is cleared and it says it does not fit.
  const tight = trim(history, { maxTokens: 10, estimator, mode: 'placeholder', keepToolResults: 2 });
  assert.deepEqual(tight.cleared, [2, 4, 6, 8]);
  assert.equal(tight.fits, false);
  assert.equal(tight.items[10], history[10]);
});

test('placeholder mode in each native format puts the marker where the result was', () => {
  const anthropic = [
    { role: 'user', content: 'go' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'read', input: {} }] },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 't1', content: big('r', 900), is_error: false },
        { type: 'text', text: 'and then?' },
      ],
    },
    { role: 'assistant', content: 'ok' },
  ];
  const cleared = trim(anthropic, {
    maxTokens: 100,
    format: 'anthropic-messages',
    mode: 'placeholder',
    keepToolResults: 0,
  });
  assert.deepEqual(cleared.items[2], {
    role: 'user',
    content: [
      { type: 'tool_result', tool_use_id: 't1', content: TRIMMED_RESULT, is_error: false },
      { type: 'text', text: 'and then?' },
    ],
  });
  assert.deepEqual(check(cleared.items, { format: 'anthropic-messages' }), []);

  const gemini = [
    { role: 'user', parts: [{ text: 'go' }] },
    { role: 'model', parts: [{ functionCall: { name: 'read', args: {} } }] },
    { role: 'user', parts: [{ functionResponse: { name: 'read', response: { output: big('r', 900) } } }] },
    { role: 'model', parts: [{ text: 'ok' }] },
  ];
  const geminiCleared = trim(gemini, {
    maxTokens: 100,
    format: 'gemini-contents',
    mode: 'placeholder',
    keepToolResults: 0,
  });
  assert.deepEqual(geminiCleared.items[2], {
    role: 'user',
    parts: [{ functionResponse: { name: 'read', response: { output: TRIMMED_RESULT } } }],
  });
  assert.deepEqual(check(geminiCleared.items, { format: 'gemini-contents' }), []);

  const responses = [
    { role: 'user', content: 'go' },
    { type: 'function_call', call_id: 'c1', name: 'read', arguments: '{}' },
    { type: 'function_call_output', call_id: 'c1', output: big('r', 900) },
    { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'ok' }] },
  ];
  const responsesCleared = trim(responses, {
    maxTokens: 100,
    format: 'responses-input',
    mode: 'placeholder',
    keepToolResults: 0,
  });
  assert.deepEqual(responsesCleared.items[2], { type: 'function_call_output', call_id: 'c1', output: TRIMMED_RESULT });
});

test('Responses: a function_call is never kept without the reasoning item before it', () => {
  const items = [
    { role: 'user', content: 'go' },
    { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: big('gAAA', 900) },
    { type: 'function_call', call_id: 'c1', name: 'read', arguments: '{}' },
    { type: 'function_call_output', call_id: 'c1', output: 'r' },
    { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'ok' }] },
  ];
  const result = trim(items, {
    maxTokens: 60,
    format: 'responses-input',
    estimator: createTokenEstimator({ charsPerToken: 1 }),
  });
  assert.deepEqual(result.omitted, [1, 2, 3]);
  assert.deepEqual(check(result.items, { format: 'responses-input' }), []);
});

test('the estimator learns the ratio from usage, within bounds', () => {
  const estimator = createTokenEstimator({ profile: 'deepseek' });
  assert.equal(estimator.charsPerToken, 3);
  assert.equal(createTokenEstimator({ profile: 'openai' }).charsPerToken, 3.5);
  estimator.calibrate(4000, 1000);
  assert.equal(estimator.charsPerToken, 4);
  assert.equal(estimator.tokensOf(4001), 1001);
  estimator.calibrate(4000, 0); // no usage: ignored
  assert.equal(estimator.charsPerToken, 4);
  estimator.calibrate(1_000_000, 10);
  assert.equal(estimator.charsPerToken, 8);
  // About the length of the JSON, without serializing.
  const message = {
    role: 'assistant',
    content: 'hé "quoted"',
    tool_calls: [{ id: 'x', function: { name: 'f', arguments: '{"a":1}' } }],
    skipped: undefined,
  };
  const exact = JSON.stringify(message).length;
  assert.ok(Math.abs(serializedChars(message) - exact) <= exact * 0.1, `${serializedChars(message)} vs ${exact}`);
});

test('on a history shaped like NexForgeCLI session-122357 (3,785 messages) trim keeps the newest turns under a 128k window, valid', () => {
  const history = seedShapedHistory();
  assert.deepEqual(check(history, { profile: 'deepseek', thinking: true }), []);
  const result = trim(history, { maxTokens: 100_000, profile: 'deepseek' });
  assert.ok(result.fits && result.estimatedTokens <= 100_000);
  assert.equal(result.items[0], history[0]);
  assert.equal(result.items[1]?.role, 'user');
  assert.equal(result.omitted.length + result.items.length, history.length);
  assert.deepEqual(check(result.items, { profile: 'deepseek', thinking: true }), []);
});

test('bad options are one clear error, never a crash inside', () => {
  assert.throws(
    () => trim([], { maxTokens: 10, format: 'openai-messages' as FormatName }),
    (error: unknown) =>
      isUnstuckError(error) &&
      error.code === 'USAGE' &&
      /unknown wire format 'openai-messages' \(known: openai-chat, anthropic-messages, gemini-contents, responses-input\)/.test(
        error.message,
      ),
  );
  assert.throws(
    () => trim([], { maxTokens: Number.NaN }),
    (error: unknown) => isUnstuckError(error) && /maxTokens must be a number/.test(error.message),
  );
  assert.throws(
    () => trim({} as unknown as unknown[], { maxTokens: 1 }),
    (error: unknown) => isUnstuckError(error) && error.code === 'INPUT_INVALID',
  );
  assert.equal(trim([], { maxTokens: 0 }).fits, true);
});
