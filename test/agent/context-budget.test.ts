import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createContextBudget } from '../../src/agent/context-budget.js';
import type { Message } from '../../src/core/index.js';

const turn = (index: number, size: number): Message[] => [
  { role: 'user', content: `question ${index} ${'q'.repeat(size)}` },
  { role: 'assistant', content: `answer ${index} ${'a'.repeat(size)}` },
];

test('context budget: the window minus the reserve and the fixed part, at three characters per token to start', () => {
  const budget = createContextBudget({
    contextWindow: 10_000,
    reserveTokens: 2_000,
    fixedChars: 300,
    fitToWindow: true,
  });
  assert.equal(budget.charsPerToken(), 3);
  assert.equal(budget.budgetTokens(), 10_000 - 2_000 - 100);
  const messages: Message[] = [{ role: 'user', content: 'hi' }];
  assert.equal(budget.tokensOf(messages), Math.ceil((300 + JSON.stringify(messages[0]).length) / 3));
});

test('context budget: calibrated from the usage report, within one to six characters per token', () => {
  const budget = createContextBudget({ contextWindow: 10_000, reserveTokens: 0, fixedChars: 0, fitToWindow: true });
  const messages = turn(0, 400);
  const chars = messages.reduce((sum, message) => sum + JSON.stringify(message).length, 0);
  budget.calibrate(messages, Math.round(chars / 4));
  assert.ok(Math.abs(budget.charsPerToken() - 4) < 0.05);
  budget.calibrate(messages, 0);
  assert.ok(Math.abs(budget.charsPerToken() - 4) < 0.05, 'no usage, no change');
  budget.calibrate(messages, 1);
  assert.equal(budget.charsPerToken(), 6);
  budget.calibrate(messages, chars * 10);
  assert.equal(budget.charsPerToken(), 1);
});

test('context budget: without a window named, requests carry the whole history and nothing is calibrated', () => {
  const budget = createContextBudget({ contextWindow: 100, reserveTokens: 10, fixedChars: 0, fitToWindow: false });
  const history = [...turn(0, 500), ...turn(1, 500)];
  assert.deepEqual(budget.window(history), { messages: history, omitted: 0, estimatedTokens: 0 });
  budget.calibrate(history, 10);
  assert.equal(budget.charsPerToken(), 3);
});

test('context budget: with a window, the oldest whole turns are left out of what is sent', () => {
  const budget = createContextBudget({ contextWindow: 300, reserveTokens: 0, fixedChars: 0, fitToWindow: true });
  const history = [...turn(0, 300), ...turn(1, 300), ...turn(2, 100)];
  const view = budget.window(history);
  assert.equal(view.omitted, 4);
  assert.deepEqual(view.messages, history.slice(4));
  assert.ok(view.estimatedTokens <= budget.budgetTokens());
});
