import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { createEmulator } from '../../src/emulator/index.js';

/**
 * The Codex and Gemini CLI session files under test/fixtures/agents/ (written by the real
 * binaries, `npm run e2e:agents -- --save-fixtures`) are what their meta.json says: the version
 * recorded, and each Codex rollout's history (its `response_item` records, in order: what Codex
 * sends as `input` on resume) valid as written and rejected by the strict emulator for the rule
 * its poisoning names.
 */

const directory = (agent: string) => new URL(`../fixtures/agents/${agent}/`, import.meta.url);
const metaOf = (agent: string) =>
  JSON.parse(readFileSync(new URL('meta.json', directory(agent)), 'utf8')) as {
    agent: string;
    version: string;
    recorded: string;
    commands: Record<string, string>;
    poisonings: { name: string; rule: string; reachedTheWire: boolean; rejectedWith: string[]; saved: string | null }[];
  };

function inputOf(rollout: string): unknown[] {
  return rollout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { type: string; payload: Record<string, unknown> })
    .filter((record) => record.type === 'response_item')
    .map(({ payload }) => {
      const { internal_chat_message_metadata_passthrough: _internal, ...item } = payload;
      return item;
    });
}

describe('agent session fixtures', () => {
  for (const [agent, version] of [
    ['codex', '0.171.0'],
    ['gemini-cli', '0.61.0'],
  ] as const) {
    test(`${agent}: meta.json records the version, the commands and the date; every file it names is there`, () => {
      const meta = metaOf(agent);
      assert.equal(meta.version, version);
      assert.match(meta.recorded, /^\d{4}-\d{2}-\d{2}T/);
      assert.ok(meta.commands['session'] !== undefined && meta.commands['resume'] !== undefined);
      const files = new Set(readdirSync(directory(agent)));
      assert.ok(files.has(`read-tool-loop.${agent}-${version}.jsonl`));
      for (const poisoning of meta.poisonings)
        if (poisoning.saved !== null) assert.ok(files.has(poisoning.saved), poisoning.saved);
    });
  }

  test('codex: the rollout as written is a valid Responses input; each saved poisoning gets its rule', async () => {
    const emulator = createEmulator({ wires: ['responses'] });
    const send = async (input: unknown[]) =>
      emulator.handle(
        new Request('http://emulator.test/v1/responses', {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
          body: JSON.stringify({ model: 'gpt-5-codex', input: [...input, { role: 'user', content: 'Say it again.' }] }),
        }),
      );
    const original = readFileSync(new URL('read-tool-loop.codex-0.171.0.jsonl', directory('codex')), 'utf8');
    assert.equal((await send(inputOf(original))).status, 200);
    const saved = metaOf('codex').poisonings.filter((poisoning) => poisoning.saved !== null);
    assert.ok(saved.length >= 3);
    for (const poisoning of saved) {
      const text = readFileSync(new URL(poisoning.saved ?? '', directory('codex')), 'utf8');
      const response = await send(inputOf(text));
      assert.equal(response.status, 400, poisoning.name);
      assert.ok(
        emulator.requests.at(-1)?.violations.some((violation) => violation.rule === poisoning.rule),
        `${poisoning.name}: ${poisoning.rule}`,
      );
    }
  });
});
