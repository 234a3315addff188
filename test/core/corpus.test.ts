import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { check, repair, type Message, type ProfileName } from '../../src/index.js';
import { assertNothingLostSilently, assertUntouchedAreSameObjects, deepFreeze } from '../support/lossless.js';

/**
 * Every real case of the corpus, under its own provider's profile: broken ones are flagged and
 * repaired valid with nothing lost; valid ones come back as the same array.
 */
const directory = new URL('../fixtures/shared/corpus/', import.meta.url);
const profileFor = (file: string, provider: string): ProfileName => {
  // The error in 021 came from a self-hosted Ministral chat template, not Mistral's API (whose validator allows user after user).
  if (file.startsWith('021-')) return 'local';
  const map: Record<string, ProfileName> = { openai: 'openai', deepseek: 'deepseek', mistral: 'mistral', anthropic: 'anthropic', other: 'local' };
  const profile = map[provider];
  assert.ok(profile !== undefined, `no profile for provider ${provider}`);
  return profile;
};

for (const file of readdirSync(directory).filter((name) => name.endsWith('.json')).sort()) {
  const record = JSON.parse(readFileSync(new URL(file, directory), 'utf8')) as { provider: string; format: string; messages: Message[]; valid?: boolean };
  if (record.format !== 'openai-chat') {
    test(`corpus ${file}: ${record.format} is not the OpenAI chat format (not checked by this core)`, { skip: `format ${record.format}` }, () => {});
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
