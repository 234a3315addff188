import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { describe, test } from 'node:test';
import type { Tool } from '../../src/agent/index.js';
import { CANCELLED, runToolBlock, startToolBlock } from '../../src/agent/run-tool-block.js';
import type { ToolCall } from '../../src/core/index.js';
import { createEmulator } from '../../src/emulator/index.js';
import { agentFor, collect } from './helpers.js';

/** Calls named `name` with `arguments` `{"n":i}`, ids call_i. */
function callsOf(names: readonly string[]): ToolCall[] {
  return names.map((name, index) => ({
    id: `call_${index}`,
    type: 'function',
    function: { name, arguments: JSON.stringify({ n: index }) },
  }));
}

/**
 * Tools that record when each call starts and ends and how many run at once. Their work is a few
 * turns of the event loop (no timer): calls that may overlap do, calls that may not cannot.
 */
function recorder() {
  const log: string[] = [];
  let active = 0;
  let maxActive = 0;
  const make = (name: string, readOnly: boolean | undefined): Tool => ({
    name,
    description: name,
    parameters: { type: 'object' },
    ...(readOnly === undefined ? {} : { readOnly }),
    run: async (args) => {
      const n = (args as { n: number }).n;
      active += 1;
      maxActive = Math.max(maxActive, active);
      log.push(`start ${n}`);
      for (let turn = 0; turn < 5; turn += 1) await new Promise((resolve) => setImmediate(resolve));
      log.push(`end ${n}`);
      active -= 1;
      return `${name} ${n}`;
    },
  });
  const tools = new Map<string, Tool>([
    ['read', make('read', true)],
    ['write', make('write', false)],
    ['undeclared', make('undeclared', undefined)],
  ]);
  return { tools, log, maxActive: () => maxActive };
}

describe('startToolBlock: side effects alone and in order, reads together', () => {
  test('three read-only calls run concurrently: all three are running at once', async () => {
    const { tools, log, maxActive } = recorder();
    const outcomes = await Promise.all(
      startToolBlock(callsOf(['read', 'read', 'read']), tools, new AbortController().signal),
    );
    assert.equal(maxActive(), 3);
    assert.deepEqual(log.slice(0, 3), ['start 0', 'start 1', 'start 2']);
    assert.deepEqual(
      outcomes.map((outcome) => outcome.result),
      ['read 0', 'read 1', 'read 2'],
    );
  });

  test('side-effecting calls run one at a time, in the order the model gave them; undeclared means side effects', async () => {
    const { tools, log, maxActive } = recorder();
    const outcomes = await Promise.all(
      startToolBlock(callsOf(['write', 'undeclared', 'write']), tools, new AbortController().signal),
    );
    assert.equal(maxActive(), 1);
    assert.deepEqual(log, ['start 0', 'end 0', 'start 1', 'end 1', 'start 2', 'end 2']);
    assert.deepEqual(
      outcomes.map((outcome) => outcome.id),
      ['call_0', 'call_1', 'call_2'],
    );
  });

  test('a mixed block: reads before a write finish before it starts, reads after it start after it ends', async () => {
    const { tools, log } = recorder();
    await Promise.all(
      startToolBlock(callsOf(['read', 'read', 'write', 'read', 'read', 'write']), tools, new AbortController().signal),
    );
    const at = (entry: string): number => log.indexOf(entry);
    assert.ok(at('start 1') < at('end 0'), 'the first two reads overlap');
    assert.ok(at('end 0') < at('start 2') && at('end 1') < at('start 2'), 'the write waits for both reads');
    assert.ok(at('end 2') < at('start 3') && at('end 2') < at('start 4'), 'the later reads wait for the write');
    assert.ok(at('start 4') < at('end 3'), 'the later reads overlap');
    assert.ok(at('end 3') < at('start 5') && at('end 4') < at('start 5'), 'the last write waits for them');
  });

  test('a declaration that throws when read counts as side effects and does not break the block', async () => {
    const { tools, log } = recorder();
    const odd = { ...tools.get('write')!, name: 'odd' };
    Object.defineProperty(odd, 'readOnly', {
      get: () => {
        throw new Error('broken getter');
      },
    });
    tools.set('odd', odd);
    const outcomes = await Promise.all(startToolBlock(callsOf(['odd', 'odd']), tools, new AbortController().signal));
    assert.deepEqual(log, ['start 0', 'end 0', 'start 1', 'end 1']);
    assert.deepEqual(
      outcomes.map((outcome) => outcome.isError),
      [false, false],
    );
  });

  test('results come back in call order, one per call, whatever order the calls finish in', async () => {
    let release = (): void => undefined;
    const slow: Tool = {
      name: 'slow',
      description: '',
      parameters: {},
      readOnly: true,
      run: () => new Promise((resolve) => (release = () => resolve('slow'))),
    };
    const fast: Tool = { name: 'fast', description: '', parameters: {}, readOnly: true, run: async () => 'fast' };
    const pending = startToolBlock(
      callsOf(['slow', 'fast', 'nope']),
      new Map([
        ['slow', slow],
        ['fast', fast],
      ]),
      new AbortController().signal,
    );
    assert.equal(pending.length, 3);
    assert.equal((await pending[1])?.result, 'fast');
    release();
    const outcomes = await Promise.all(pending);
    assert.deepEqual(
      outcomes.map((outcome) => [outcome.id, outcome.result.split(' (')[0]]),
      [
        ['call_0', 'slow'],
        ['call_1', 'fast'],
        ['call_2', 'Error: unknown tool "nope"'],
      ],
    );
  });

  test('after an abort a call that has not started never starts; the running one is answered "cancelled"', async () => {
    const controller = new AbortController();
    const started: number[] = [];
    const write: Tool = {
      name: 'write',
      description: '',
      parameters: {},
      run: async (args) => {
        started.push((args as { n: number }).n);
        if (started.length === 1) controller.abort();
        await new Promise((resolve) => setImmediate(resolve));
        return 'written';
      },
    };
    const outcomes = await Promise.all(
      startToolBlock(callsOf(['write', 'write', 'write']), new Map([['write', write]]), controller.signal),
    );
    assert.deepEqual(started, [0]);
    assert.deepEqual(
      outcomes.map((outcome) => outcome.result),
      [CANCELLED, CANCELLED, CANCELLED],
    );
  });

  test('50 calls in one block add one abort listener, not 50, and it is removed when the block ends', async () => {
    const { tools } = recorder();
    const signal = new AbortController().signal;
    const pending = startToolBlock(
      callsOf(Array.from({ length: 50 }, (_, index) => (index % 2 === 0 ? 'read' : 'write'))),
      tools,
      signal,
    );
    assert.equal(getEventListeners(signal, 'abort').length, 1);
    await Promise.all(pending);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(getEventListeners(signal, 'abort').length, 0);
  });
});

describe('createAgent: the same guarantees through the library', () => {
  test('50 tool calls in one block print no MaxListenersExceededWarning', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const { tools } = recorder();
      const calls = Array.from({ length: 50 }, (_, index) => ({
        name: index % 3 === 0 ? 'write' : 'read',
        arguments: JSON.stringify({ n: index }),
      }));
      const emulator = createEmulator({ script: [{ toolCalls: calls }, { text: 'done' }] });
      const agent = agentFor(emulator, { tools: [...tools.values()] });
      const events = await collect(agent.runTurn('go'));
      assert.equal(events.filter((event) => event.type === 'tool-call-end' && !event.isError).length, 50);
      // Warnings are emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(
        warnings.map((warning) => `${warning.name}: ${warning.message}`),
        [],
      );
    } finally {
      process.off('warning', onWarning);
    }
  });
});

describe('runToolBlock: the block as events', () => {
  test('a start for every call first, then an end for each in call order; returns the outcomes', async () => {
    const { tools } = recorder();
    const block = runToolBlock(callsOf(['write', 'read', 'read']), tools, new AbortController().signal);
    const events = [];
    const generator = block.events();
    let next = await generator.next();
    while (next.done !== true) {
      events.push(next.value);
      next = await generator.next();
    }
    assert.deepEqual(
      events.map((event) => `${event.type} ${'id' in event ? event.id : ''}`),
      [
        'tool-call-start call_0',
        'tool-call-start call_1',
        'tool-call-start call_2',
        'tool-call-end call_0',
        'tool-call-end call_1',
        'tool-call-end call_2',
      ],
    );
    assert.deepEqual(
      next.value.map((outcome) => outcome.result),
      ['write 0', 'read 1', 'read 2'],
    );
    assert.deepEqual(await block.outcomes, next.value);
  });

  test('a consumer that stops reading: after the abort, outcomes still answers every call', async () => {
    const { tools } = recorder();
    const controller = new AbortController();
    const block = runToolBlock(callsOf(['write', 'write', 'write']), tools, controller.signal);
    const generator = block.events();
    await generator.next();
    await generator.return([]);
    controller.abort();
    const outcomes = await block.outcomes;
    assert.equal(outcomes.length, 3);
    assert.ok(outcomes.every((outcome) => outcome.result === CANCELLED || /^write \d$/.test(outcome.result)));
    assert.equal(outcomes[2]?.result, CANCELLED);
  });
});
