import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { OpenCodeMessage } from '../../../src/cli/sessions/opencode-history.js';
import { toOpenCodeChat } from '../../../src/cli/sessions/opencode-history.js';
import { applyPlan, assessOpenCode } from '../../../src/cli/sessions/opencode-session.js';
import { planWriteback } from '../../../src/cli/sessions/opencode-writeback.js';

/**
 * OpenCode sessions as its rows hold them, with the damage seen in the field: tool parts recorded twice, call ids
 * empty or shared, calls left pending, errors. Parts get ascending ids, as OpenCode gives them.
 */
const toolPart = fc.record({
  callID: fc.constantFrom('call_a', 'call_b', 'call_c', ''),
  tool: fc.constantFrom('read', 'bash'),
  status: fc.constantFrom('completed', 'completed', 'error', 'running'),
  output: fc.constantFrom('one', 'two', ''),
  copies: fc.constantFrom(1, 1, 1, 2),
});
const step = fc.record({ text: fc.constantFrom('', 'Reading.', 'Done.'), tools: fc.array(toolPart, { maxLength: 3 }) });
const turn = fc.record({
  question: fc.constantFrom('q', 'and then?'),
  steps: fc.array(step, { minLength: 1, maxLength: 3 }),
});

interface Tool {
  callID: string;
  tool: string;
  status: string;
  output: string;
  copies: number;
}

function sessionOf(
  turns: readonly { question: string; steps: { text: string; tools: Tool[] }[] }[],
): OpenCodeMessage[] {
  let counter = 0;
  const id = (prefix: string) => {
    counter += 1;
    return `${prefix}_${String(counter).padStart(6, '0')}`;
  };
  const history: OpenCodeMessage[] = [];
  for (const entry of turns) {
    history.push({
      info: { id: id('msg'), role: 'user', model: { providerID: 'openai', modelID: 'gpt-4o' } },
      parts: [{ id: id('prt'), type: 'text', text: entry.question }],
    });
    for (const { text, tools } of entry.steps) {
      const parts: Record<string, unknown>[] = [{ id: id('prt'), type: 'step-start' }];
      if (text !== '') parts.push({ id: id('prt'), type: 'text', text });
      for (const tool of tools) {
        const state =
          tool.status === 'completed'
            ? {
                status: 'completed',
                input: { path: 'x' },
                output: tool.output,
                title: '',
                metadata: {},
                time: { start: 1, end: 2 },
              }
            : tool.status === 'error'
              ? { status: 'error', input: { path: 'x' }, error: 'failed', time: { start: 1, end: 2 } }
              : { status: 'running', input: { path: 'x' }, time: { start: 1 } };
        const part = { type: 'tool', callID: tool.callID, tool: tool.tool, state };
        for (let copy = 0; copy < tool.copies; copy += 1) parts.push({ id: id('prt'), ...part });
      }
      parts.push({ id: id('prt'), type: 'step-finish', reason: 'stop' });
      history.push({ info: { id: id('msg'), role: 'assistant', providerID: 'openai', modelID: 'gpt-4o' }, parts });
    }
  }
  return history;
}

const seen = { violations: 0, edits: 0, unwritable: 0 };

test('a repair written back into the parts leaves a session the provider takes, or says what it could not write', () => {
  fc.assert(
    fc.property(fc.array(turn, { minLength: 1, maxLength: 4 }), (turns) => {
      const history = sessionOf(turns);
      const assessment = assessOpenCode(history, {});
      seen.violations += assessment.violations.length > 0 ? 1 : 0;
      seen.edits += assessment.plan.edits.length > 0 ? 1 : 0;
      seen.unwritable += assessment.plan.unwritable.length > 0 ? 1 : 0;
      const edited = applyPlan(history, assessment.plan);
      if (assessment.plan.unwritable.length === 0)
        assert.deepEqual(
          assessment.after,
          [],
          JSON.stringify({ plan: assessment.plan, violations: assessment.violations }),
        );
      // Every part no edit names is the same object, in the same place: those rows stay as they were.
      const named = new Set(assessment.plan.edits.map((edit) => edit.part));
      const kept = edited.flatMap((message) => message.parts).filter((part) => !named.has(String(part['id'])));
      const before = history.flatMap((message) => message.parts).filter((part) => !named.has(String(part['id'])));
      assert.deepEqual(kept, before);
      assert.ok(kept.every((part, index) => part === before[index]));
      // Only tool parts are ever edited.
      for (const edit of assessment.plan.edits)
        assert.equal(
          history.flatMap((message) => message.parts).find((part) => part['id'] === edit.part)?.['type'],
          'tool',
        );
      // Written back, read again: nothing left to repair (idempotent).
      if (assessment.plan.unwritable.length === 0) assert.deepEqual(assessOpenCode(edited, {}).plan.edits, []);
    }),
    { numRuns: 300 },
  );
  // The generator reaches the cases that matter: broken sessions, written back, and some that cannot be.
  assert.ok(seen.violations > 50 && seen.edits > 30, JSON.stringify(seen));
});

test('a valid session maps to no edits at all', () => {
  const history = sessionOf([
    {
      question: 'q',
      steps: [
        {
          text: 'Reading.',
          tools: [{ callID: 'call_a', tool: 'read', status: 'completed', output: 'one', copies: 1 }],
        },
      ],
    },
  ]);
  const { messages, sources } = toOpenCodeChat(history);
  const parts = new Map(history.flatMap((message) => message.parts).map((part) => [String(part['id']), part]));
  assert.deepEqual(planWriteback(messages, sources, parts, messages), { edits: [], unwritable: [] });
});

test('a change the parts cannot hold is listed, not written: a text the repair rewrites', () => {
  const history = sessionOf([
    {
      question: 'q',
      steps: [
        {
          text: 'Reading.',
          tools: [{ callID: 'call_a', tool: 'read', status: 'completed', output: 'one', copies: 1 }],
        },
      ],
    },
  ]);
  const { messages, sources } = toOpenCodeChat(history);
  const parts = new Map(history.flatMap((message) => message.parts).map((part) => [String(part['id']), part]));
  const repaired = messages.map((message) =>
    message.role === 'assistant' ? { ...message, content: 'Other.' } : message,
  );
  const plan = planWriteback(messages, sources, parts, repaired);
  assert.deepEqual(plan.edits, []);
  assert.equal(plan.unwritable.length, 1);
  assert.match(plan.unwritable[0] as string, /messages\[1\] \(assistant\): its text or fields changed: not written/);
});

test('a result OpenCode rebuilds itself (a running tool part) is not given an output', () => {
  const history = sessionOf([
    {
      question: 'q',
      steps: [{ text: '', tools: [{ callID: 'call_a', tool: 'read', status: 'running', output: '', copies: 1 }] }],
    },
  ]);
  const { messages, sources } = toOpenCodeChat(history);
  assert.equal(messages[2]?.content, '[Tool execution was interrupted]');
  const parts = new Map(history.flatMap((message) => message.parts).map((part) => [String(part['id']), part]));
  const repaired = messages.map((message) => (message.role === 'tool' ? { ...message, content: 'made up' } : message));
  const plan = planWriteback(messages, sources, parts, repaired);
  assert.deepEqual(plan.edits, []);
  assert.match(plan.unwritable[0] as string, /rebuilt by OpenCode \(status running\): not written/);
});
