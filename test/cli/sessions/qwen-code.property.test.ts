import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { qwenCodeReader } from '../../../src/cli/sessions/qwen-code.js';
import { check } from '../../../src/core/check.js';
import { repair } from '../../../src/core/repair.js';

/**
 * Qwen Code chat files of several tool turns, with each result damaged in one of the ways seen from the real
 * binary (test/fixtures/agents/qwen-code: another id, an empty id, the call's id gone, the result lost, written
 * twice, written after the answer), read, repaired and written back: the result reads valid by the chat rules,
 * every tool output that was in the chain is still sent, every record left is on the chain Qwen Code resumes,
 * records kept are the same bytes or differ only in `message.parts` / `parentUuid`, and a second repair changes
 * nothing. UNSTUCK_PROPERTY_RUNS scales the run.
 */
const runs = Math.max(50, Math.floor(Number(process.env['UNSTUCK_PROPERTY_RUNS'] ?? 10_400) / 40));
const seed =
  process.env['UNSTUCK_PROPERTY_SEED'] === undefined ? 20261202 : Number(process.env['UNSTUCK_PROPERTY_SEED']);

type Rec = Record<string, any>;
type Damage = 'none' | 'other-id' | 'empty-id' | 'call-id-gone' | 'lost' | 'twice' | 'after-answer';
const damages: Damage[] = ['none', 'other-id', 'empty-id', 'call-id-gone', 'lost', 'twice', 'after-answer'];

const SESSION = '11111111-2222-4333-8444-555555555555';
const turnShape = fc.record({
  calls: fc.array(fc.constantFrom(...damages), { minLength: 0, maxLength: 3 }),
  telemetry: fc.boolean(),
  text: fc.boolean(),
});

/** A chat file: per turn a prompt, the call record, each result's record, the answer; then the damage applied. */
function chatFile(turns: { calls: Damage[]; telemetry: boolean; text: boolean }[]): string {
  const records: Rec[] = [];
  let counter = 0;
  const add = (fields: Rec): Rec => {
    counter += 1;
    const record: Rec = {
      uuid: `00000000-0000-4000-8000-${String(counter).padStart(12, '0')}`,
      parentUuid: records.at(-1)?.['uuid'] ?? null,
      sessionId: SESSION,
      timestamp: '2026-12-02T00:00:00.000Z',
      ...fields,
      cwd: '/work',
      version: '0.24.4',
    };
    records.push(record);
    return record;
  };
  const late: { result: Rec }[] = [];
  turns.forEach((turn, t) => {
    add({ type: 'user', provenance: 'real_user', message: { role: 'user', parts: [{ text: `question ${t}` }] } });
    if (turn.telemetry) add({ type: 'system', subtype: 'ui_telemetry', systemPayload: { uiEvent: {} } });
    if (turn.calls.length > 0) {
      const parts: Rec[] = turn.text ? [{ text: `calling ${t}` }] : [];
      turn.calls.forEach((damage, c) => {
        const call: Rec = { id: `call_${t}_${c}`, name: 'read_file', args: { file_path: `/work/f${t}${c}` } };
        if (damage === 'call-id-gone') delete call['id'];
        parts.push({ functionCall: call });
      });
      add({ type: 'assistant', model: 'qwen3-coder-plus', message: { role: 'model', parts } });
      turn.calls.forEach((damage, c) => {
        const id = damage === 'other-id' ? `call_elsewhere_${t}_${c}` : damage === 'empty-id' ? '' : `call_${t}_${c}`;
        const result = {
          type: 'tool_result',
          message: {
            role: 'user',
            parts: [{ functionResponse: { id, name: 'read_file', response: { output: `output ${t}.${c}` } } }],
          },
        };
        if (damage === 'lost') return;
        if (damage === 'after-answer') {
          late.push({ result });
          return;
        }
        add(result);
        if (damage === 'twice') add(result);
      });
    }
    add({ type: 'assistant', message: { role: 'model', parts: [{ text: `answer ${t}` }] } });
    // A result written after the answer: the answer hangs where the result would, the result after it.
    for (const { result } of late.splice(0)) add(result);
  });
  return `${records.map((record) => JSON.stringify(record)).join('\n')}\n`;
}

function chainLength(text: string): { chain: number; records: number } {
  const all = text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Rec);
  const byUuid = new Map(all.map((record) => [record['uuid'], record]));
  let chain = 0;
  const seen = new Set<string>();
  for (let record = all.at(-1); record !== undefined && !seen.has(record['uuid']); ) {
    seen.add(record['uuid']);
    chain += 1;
    record = record['parentUuid'] === null ? undefined : byUuid.get(record['parentUuid']);
  }
  return { chain, records: all.length };
}

const outputsOf = (native: unknown[]): string[] => JSON.stringify(native).match(/output \d+\.\d+/g) ?? [];

test('a damaged Qwen Code chat repairs valid, keeps every output, touches only parts and links, idempotently', () => {
  fc.assert(
    fc.property(fc.array(turnShape, { minLength: 1, maxLength: 5 }), (turns) => {
      const text = chatFile(turns);
      const session = qwenCodeReader.read('chat.jsonl', text);
      const result = repair(session.native, { format: 'openai-chat' });
      const written = session.write(result.messages);
      const again = qwenCodeReader.read('chat.jsonl', written);
      assert.deepEqual(check(again.native, { format: 'openai-chat' }), [], 'the written file reads valid');
      // Every output that was sent before is still sent (as a result, or as text).
      const before = new Set(outputsOf(session.native));
      const after = new Set(outputsOf(again.native));
      for (const output of before) assert.ok(after.has(output), `${output} kept`);
      // Every record is on the chain from the newest one.
      const { chain, records } = chainLength(written);
      assert.equal(chain, records, 'every record is on the chain Qwen Code resumes');
      // A record kept (its uuid still there) is the same line, or differs only in message.parts and parentUuid.
      const oldByUuid = new Map(
        text
          .split('\n')
          .filter(Boolean)
          .map((line) => [(JSON.parse(line) as Rec)['uuid'], line] as const),
      );
      const strip = (record: Rec) => {
        const { parentUuid: _parent, message, ...rest } = record;
        const { parts: _parts, ...messageRest } = (message ?? {}) as Rec;
        return JSON.stringify({ ...rest, message: messageRest });
      };
      for (const line of written.split('\n').filter(Boolean)) {
        const record = JSON.parse(line) as Rec;
        const old = oldByUuid.get(record['uuid']);
        if (old === undefined || old === line) continue;
        assert.equal(strip(record), strip(JSON.parse(old) as Rec));
      }
      // An undamaged file is written back as it was; a repaired one needs no second repair.
      if (turns.every((turn) => turn.calls.every((damage) => damage === 'none'))) assert.equal(written, text);
      assert.equal(repair(again.native, { format: 'openai-chat' }).changed, false, 'idempotent');
    }),
    { numRuns: runs, seed },
  );
});
