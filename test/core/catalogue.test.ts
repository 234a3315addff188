import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { check, classifyError, type Message, type ProfileName, repair } from '../../src/index.js';

/**
 * The catalogue is the ground truth: every openai-chat entry of a provider we have a profile for
 * must be found by check under that profile, worded so the catalogue's own `match` pattern
 * recognises it, and repaired (or left in `remaining` with why).
 */
interface Entry {
  provider: string;
  id: string;
  example: Message[];
  example_format: string;
  match?: string;
  rule: string;
}

const catalogue = JSON.parse(
  readFileSync(new URL('../fixtures/shared/rules.json', import.meta.url), 'utf8'),
) as Entry[];
const profileOf: Record<string, ProfileName> = {
  'openai-chat': 'openai',
  deepseek: 'deepseek',
  dashscope: 'qwen',
  mistral: 'mistral',
  moonshot: 'moonshot',
  groq: 'groq',
};

// Entries about request settings or other endpoints than chat completions' messages array, left out on purpose.
const outOfScope = new Set([
  'openai-chat/system-role-unsupported', // depends on the model (o1-mini), not on the history
  'openai-chat/json-keyword-required', // depends on response_format
  'dashscope/json-keyword-required',
  'openai-chat/name-pattern', // names are the caller's tool definitions; reported upstream, not repaired
  'openai-chat/tool-calls-too-many',
  'deepseek/reasoning-content-forbidden', // legacy R1 guide, no error text, superseded
  'deepseek/prefix-requires-beta', // depends on the base URL
  'deepseek/content-empty', // Anthropic-format endpoint only
  'dashscope/roles-not-alternating', // legacy native API
  'mistral/name-pattern',
  'mistral/empty-messages',
]);

// Options each entry's rule depends on (the catalogue states them in the rule text).
const optionsFor = (entry: Entry) => {
  const options: Parameters<typeof check>[1] & {} = {
    profile: profileOf[entry.provider] as ProfileName,
    scope: 'request',
  };
  if (entry.provider === 'deepseek' && /deepseek-reasoner/.test(entry.rule)) options.model = 'deepseek-reasoner';
  if (/reasoning-content-missing/.test(entry.id)) options.thinking = true;
  return options;
};

// Where a provider reports a shape with another rule's text, the catalogue says which (notes).
const aliases: Record<string, string[]> = {
  'openai-chat/tool-result-id-mismatch': ['tool-result-id-mismatch', 'tool-calls-unanswered'],
  'mistral/tool-result-id-mismatch': ['tool-result-id-mismatch', 'tool-calls-unanswered'],
  'mistral/empty-messages': ['empty-messages'],
};

for (const entry of catalogue) {
  const key = `${entry.provider}/${entry.id}`;
  if (!(entry.provider in profileOf) || entry.example_format !== 'openai-chat' || outOfScope.has(key)) continue;
  test(`catalogue ${key}: found, worded as the provider words it, repaired`, () => {
    const options = optionsFor(entry);
    const violations = check(entry.example, options);
    const accepted = aliases[key] ?? [entry.id];
    const found = violations.filter((violation) => accepted.includes(violation.rule));
    assert.ok(
      found.length > 0,
      `expected ${accepted.join(' or ')}, got ${JSON.stringify(violations.map((v) => v.rule))}`,
    );
    if (entry.match !== undefined && accepted[0] === entry.id) {
      const pattern = new RegExp(entry.match);
      assert.ok(
        found.some((violation) => pattern.test(violation.message)),
        `no message matches /${entry.match}/: ${found.map((v) => v.message).join(' | ')}`,
      );
      // And classifyError reads our own wording back as the same rule.
      const own = found.find((violation) => pattern.test(violation.message));
      assert.equal(classifyError(400, { error: { message: own?.message } })?.rule !== undefined, true);
    }
    const result = repair(entry.example, options);
    const left = check(result.messages, options).filter((violation) => accepted.includes(violation.rule));
    const explained = result.remaining.filter((violation) => accepted.includes(violation.rule));
    assert.deepEqual(
      left,
      explained.map(({ why: _why, ...violation }) => violation),
      'anything still violated must be in remaining',
    );
  });
}
