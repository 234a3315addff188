import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { check, classifyError, type FormatName, type Message, type ProfileName, repair } from '../../src/index.js';
import { assertNothingLostSilently, assertUntouchedAreSameObjects, deepFreeze } from '../support/lossless.js';
import { assertNativeNothingLost, assertNativeUntouchedSame } from '../support/native-histories.js';

/**
 * Every real case of the corpus, under its own provider's profile: broken ones are flagged and
 * repaired valid with nothing lost; valid ones come back as the same array.
 */
const directory = new URL('../fixtures/shared/corpus/', import.meta.url);
const profileFor = (file: string, provider: string): ProfileName => {
  // The error in 021 came from a self-hosted Ministral chat template, not Mistral's API (whose validator allows user after user).
  if (file.startsWith('021-')) return 'local';
  const map: Record<string, ProfileName> = {
    openai: 'openai',
    deepseek: 'deepseek',
    mistral: 'mistral',
    anthropic: 'anthropic',
    other: 'local',
  };
  const profile = map[provider];
  assert.ok(profile !== undefined, `no profile for provider ${provider}`);
  return profile;
};

// The corpus names formats by their wire; check's format option by the array it reads.
const formatOf: Record<string, FormatName> = {
  'anthropic-messages': 'anthropic-messages',
  gemini: 'gemini-contents',
  'openai-responses': 'responses-input',
};

// What no repair can fix, and must say so: a signed thinking block cannot be recreated (the case's own notes say as much).
const unrepairable: Record<string, string[]> = {
  '033-anthropic-thinking-blocks-dropped-before-tool-use.json': ['thinking-block-missing'],
};

for (const file of readdirSync(directory)
  .filter((name) => name.endsWith('.json'))
  .sort()) {
  const record = JSON.parse(readFileSync(new URL(file, directory), 'utf8')) as {
    provider: string;
    format: string;
    kind: string[];
    error: string;
    messages: Message[];
    valid?: boolean;
  };
  if (record.format !== 'openai-chat') {
    const format = formatOf[record.format];
    assert.ok(format !== undefined, `no format reader for ${record.format}`);
    // The case's request had extended thinking on: its error is the one thinking mode raises.
    const options = { thinking: record.kind.includes('missing-thinking-block') };
    test(`corpus ${file} as ${format}`, () => {
      const input = deepFreeze(record.messages as unknown[]);
      const violations = check(input, { ...options, format });
      const result = repair(input, { ...options, format });
      if (record.valid === true) {
        assert.deepEqual(violations, []);
        assert.equal(result.messages, input, 'a valid history comes back as the same array');
        assert.deepEqual(result.changes, []);
        return;
      }
      assert.ok(violations.length > 0, 'a broken case must be flagged');
      for (const violation of violations)
        assert.ok(
          classifyError(400, violation.message) !== undefined,
          `worded as a provider words it: ${violation.message}`,
        );
      const left = unrepairable[file];
      if (left !== undefined) {
        assert.deepEqual(
          result.remaining.map((violation) => violation.rule),
          left,
        );
        for (const violation of result.remaining) assert.match(violation.why, /.{20,}/);
        // Only the case's placeholder ids (`toolu_…`, off the API's id pattern) are remapped; the thinking block is not invented.
        assert.deepEqual(
          [...new Set(result.changes.map((change) => change.kind))],
          ['id-remapped'],
          'what repair cannot fix it leaves as it was',
        );
        return;
      }
      assert.ok(result.changed);
      assert.deepEqual(check(result.messages, { ...options, format }), [], 'the repaired history is valid');
      assert.deepEqual(result.remaining, []);
      assertNativeNothingLost(format, input, result.messages, result.changes);
      assertNativeUntouchedSame(input, result.messages, result.changes);
      for (const change of result.changes)
        assert.ok(change.index >= 0 && change.index < input.length, 'a change names a native input index');
      const again = repair(result.messages, { ...options, format });
      assert.equal(again.changed, false, 'repair is idempotent');
      assert.equal(again.messages, result.messages);
    });
    continue;
  }
  const profile = profileFor(file, record.provider);
  test(`corpus ${file} under ${profile}`, () => {
    const messages = deepFreeze(record.messages);
    const violations = check(messages, { profile });
    const result = repair(messages, { profile });
    if (record.valid === true) {
      assert.deepEqual(violations, []);
      assert.equal(result.messages, messages, 'a valid history comes back as the same array');
      assert.deepEqual(result.changes, []);
      return;
    }
    assert.ok(violations.length > 0, 'a broken case must be flagged');
    assert.ok(result.changed);
    assert.deepEqual(check(result.messages, { profile }), [], 'the repaired history is valid');
    assert.deepEqual(result.remaining, []);
    assertNothingLostSilently(messages, result.messages, result.changes);
    assertUntouchedAreSameObjects(messages, result.messages, result.changes);
    const again = repair(result.messages, { profile });
    assert.equal(again.changed, false, 'repair is idempotent');
    assert.equal(again.messages, result.messages);
  });
}
