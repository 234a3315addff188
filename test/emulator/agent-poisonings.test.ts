import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { poisonings } from '../../e2e/agents/poison.js';
import { check } from '../../src/core/index.js';

/**
 * The e2e harness's poisonings, on the real session file Claude Code 2.1.332 wrote: each changes
 * only the lines it names, keeps every other line byte for byte, and makes the message it
 * targets what the poisoning says (checked with the core where the core knows the rule).
 */
const fixture = readFileSync(
  new URL('../fixtures/agents/claude-code/read-tool-loop.claude-code-2.1.332.jsonl', import.meta.url),
  'utf8',
);

test('every poisoning keeps the lines it does not name byte for byte', () => {
  const original = fixture.split('\n');
  for (const poisoning of poisonings) {
    let counter = 0;
    const poisoned = poisoning.apply(fixture, () => `00000000-0000-4000-8000-${String(++counter).padStart(12, '0')}`);
    const lines = poisoned.text.split('\n');
    const added = poisoned.lines.length - 1;
    assert.equal(lines.length, original.length + added, poisoning.name);
    const first = (poisoned.lines[0] as number) - 1;
    assert.deepEqual(lines.slice(0, first), original.slice(0, first), `${poisoning.name}: lines before`);
    assert.deepEqual(
      lines.slice(first + poisoned.lines.length),
      original.slice(first + 1),
      `${poisoning.name}: lines after`,
    );
    for (const line of poisoned.lines) JSON.parse(lines[line - 1] as string);
  }
});

test('the whitespace poisoning links a blank text event of the same message between the thinking and the call', () => {
  const poisoning = poisonings.find((entry) => entry.name === 'whitespace-text-event-before-tool-use');
  assert.ok(poisoning !== undefined);
  const poisoned = poisoning.apply(fixture, () => 'blank-uuid');
  const [blank, call] = poisoned.lines.map((line) => JSON.parse(poisoned.text.split('\n')[line - 1] as string));
  assert.equal(blank.uuid, 'blank-uuid');
  assert.equal(call.parentUuid, 'blank-uuid');
  assert.equal(blank.message.id, call.message.id);
  assert.deepEqual(blank.message.content, [{ type: 'text', text: ' \n' }]);
  // Joined as Claude Code joins one message's events, the core finds the API's rule.
  const joined = [
    { role: 'user', content: 'read' },
    { role: 'assistant', content: [...blank.message.content, ...call.message.content] },
  ];
  assert.equal(check(joined, { format: 'anthropic-messages' })[0]?.rule, 'text-block-empty');
});
