import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { check, classifyError, type FormatName, repair } from '../../src/index.js';
import { deepFreeze } from '../support/lossless.js';

/**
 * Every catalogue entry of Anthropic, Gemini and the Responses API whose rule check covers:
 * its example is found, worded so the catalogue's own `match` pattern recognises it, and repaired
 * (or left in `remaining` with why). The entries left out are listed with the reason.
 */
interface Entry {
  provider: string;
  id: string;
  example: unknown[];
  example_format: string;
  match?: string;
}

const catalogue = JSON.parse(
  readFileSync(new URL('../fixtures/shared/rules.json', import.meta.url), 'utf8'),
) as Entry[];
const formatOf: Record<string, FormatName> = {
  'anthropic-messages': 'anthropic-messages',
  'gemini-contents': 'gemini-contents',
  'openai-responses-input': 'responses-input',
};
const providers = new Set(['anthropic', 'gemini', 'openai-responses']);

const outOfScope: Record<string, string> = {
  'anthropic/tool-call-id-format':
    "ids are the caller's; renaming them would break the link to the tool run that produced them",
  'anthropic/tool-call-arguments-invalid-json': 'not checked yet: input that is not an object',
  'anthropic/tool-use-wrong-role': 'not checked yet: tool_use in a user message',
  'anthropic/trailing-whitespace-final-assistant': 'depends on the request ending with a prefill',
  'anthropic/ends-with-assistant': 'depends on the model (prefill support)',
  'anthropic/first-message-not-user': 'historical; Bedrock only',
  'anthropic/thinking-block-not-first': 'thinking blocks are signed: not reordered',
  'anthropic/thinking-signature-invalid': 'only the provider can verify a signature',
  'anthropic/thinking-when-disabled': "depends on the request's thinking setting for the final message",
  'anthropic/thinking-final-block': 'thinking blocks are signed: not edited',
  'gemini/ends-with-assistant': 'depends on the model',
  'gemini/thinking-signature-invalid': 'only the provider can verify a signature',
  'openai-responses/reasoning-item-missing': "depends on the model and on store; the reasoning item is the provider's",
  'openai-responses/system-role-unsupported': 'the Codex subscription backend only',
};

// Where the provider answers a shape with another rule's text, the catalogue says so (notes).
const aliases: Record<string, string[]> = {
  'gemini/tool-results-excess': ['tool-results-excess', 'tool-calls-unanswered'],
};

// Rules whose fix is the caller's: they stay in remaining, with why.
const leftToCaller = new Set(['thinking-block-missing', 'system-role-in-messages', 'empty-messages']);

for (const entry of catalogue) {
  const key = `${entry.provider}/${entry.id}`;
  const format = formatOf[entry.example_format];
  if (!providers.has(entry.provider) || format === undefined) continue;
  if (outOfScope[key] !== undefined) {
    test(`catalogue ${key}`, { skip: outOfScope[key] }, () => {});
    continue;
  }
  test(`catalogue ${key}: found in ${format}, worded as the provider words it, repaired`, () => {
    const options = { thinking: entry.id === 'thinking-block-missing' };
    const example = deepFreeze(entry.example);
    const violations = check(example, { ...options, format });
    const accepted = aliases[key] ?? [entry.id];
    const found = violations.filter((violation) => accepted.includes(violation.rule));
    assert.ok(
      found.length > 0,
      `expected ${accepted.join(' or ')}, found ${JSON.stringify(violations.map((violation) => violation.rule))}`,
    );
    assert.ok(entry.match !== undefined, 'every covered entry has a match pattern');
    for (const violation of found) {
      assert.match(
        violation.message,
        new RegExp(entry.match),
        `${violation.message} is worded as ${entry.provider} words it`,
      );
      assert.notEqual(classifyError(400, violation.message), undefined);
    }
    const result = repair(example, { ...options, format });
    for (const left of result.remaining) {
      assert.ok(leftToCaller.has(left.rule), `only what needs the caller remains: ${left.rule} (${left.message})`);
      assert.match(left.why, /.{20,}/);
    }
    assert.deepEqual(
      check(result.messages, { ...options, format }).filter((violation) => !leftToCaller.has(violation.rule)),
      [],
    );
    assert.equal(repair(result.messages, { ...options, format }).changed, false, 'idempotent');
  });
}
