import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { check, classifyError, type FormatName, repair } from '../../src/index.js';
import { deepFreeze } from '../support/lossless.js';

/**
 * Every catalogue entry of Anthropic, Gemini and the Responses API whose rule check covers:
 * its example is found, worded so the catalogue's own `match` pattern recognises it, and repaired
 * at the strongest level (or left in `remaining` with why). The entries left out are listed with the reason.
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
  'anthropic/first-message-not-user':
    'the first-party API accepts an assistant-first conversation (anthropics/anthropic-sdk-typescript#622); only Bedrock rejects it, and a Messages request does not say it goes to Bedrock',
  'anthropic/thinking-signature-invalid': 'only the provider can verify a signature',
  'gemini/thinking-signature-invalid': 'only the provider can verify a signature',
};

/**
 * The request settings an entry's rule depends on (CATALOGUE: "Request-level settings that matter
 * (thinking on, model family) are in the rule text/notes"); the rest are sent with thinking off.
 */
const requestOf: Record<string, { thinking?: boolean; model?: string; endpoint?: 'chatgpt-codex' }> = {
  'anthropic/thinking-block-missing': { thinking: true },
  'anthropic/thinking-block-not-first': { thinking: true },
  // "Newer Claude models (Sonnet 4.6, Opus 4.6+ and later) do not support assistant prefill"
  'anthropic/ends-with-assistant': { model: 'claude-sonnet-4-6' },
  // A prefill, so a model that takes one ("Older models (4.5 and earlier)").
  'anthropic/trailing-whitespace-final-assistant': { model: 'claude-sonnet-4-5' },
  // "Newer Gemini models (3.x after 3.1, e.g. gemini-3.7/3.8-flash) reject contents whose last turn is a model turn"
  'gemini/ends-with-assistant': { model: 'gemini-3.8-flash' },
  // "Only applies to reasoning models when items carry server ids (fc_/msg_)"
  'openai-responses/reasoning-item-missing': { model: 'gpt-5' },
  // "ChatGPT-subscription Codex backend (not the public API)"
  'openai-responses/system-role-unsupported': { endpoint: 'chatgpt-codex' },
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
    const options = { thinking: false, ...requestOf[key], level: 'strongest' as const };
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
