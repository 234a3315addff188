import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { run } from '../../../src/cli/run.js';
import { codexReader } from '../../../src/cli/sessions/codex.js';
import { check as checkHistory } from '../../../src/core/check.js';
import { repair as repairHistory } from '../../../src/core/repair.js';
import { captureIo } from '../../support/capture-io.js';
import { useTemporaryDirectory } from '../helpers.js';

const fixtures = fileURLToPath(new URL('../../fixtures/agents/codex/', import.meta.url));
const meta = JSON.parse(await readFile(`${fixtures}meta.json`, 'utf8')) as {
  poisonings: { name: string; rule: string; saved: string | null }[];
};
const { path } = useTemporaryDirectory('unstuck-codex-');

async function copy(name: string): Promise<{ file: string; original: string }> {
  const original = await readFile(`${fixtures}${name}`, 'utf8');
  const file = path(name);
  await writeFile(file, original);
  return { file, original };
}

/** The lines of A not in B (as a multiset), in order. */
function linesOnlyIn(a: string, b: string): string[] {
  const counts = new Map<string, number>();
  for (const line of b.split('\n')) counts.set(line, (counts.get(line) ?? 0) + 1);
  return a.split('\n').filter((line) => {
    const left = counts.get(line) ?? 0;
    if (left === 0) return true;
    counts.set(line, left - 1);
    return false;
  });
}

describe('Codex 0.171.0 rollout files (written by the real binary)', () => {
  for (const name of ['read-tool-loop.codex-0.171.0.jsonl', 'parallel-read.codex-0.171.0.jsonl']) {
    test(`${name}: valid, read as its response_items, printed back byte for byte`, async () => {
      const { file, original } = await copy(name);
      const io = captureIo();
      assert.equal(await run(['check', file], io), 0, io.out() + io.err());
      assert.match(io.out(), /valid for responses-input \(Codex session\)/);
      const session = codexReader.read(file, original);
      assert.ok(codexReader.detect(file, original));
      assert.equal(session.write(session.native), original);
      assert.ok(session.native.every((item) => !('internal_chat_message_metadata_passthrough' in (item as object))));
      const types = session.native.map((item) => (item as { type: string }).type);
      assert.ok(types.includes('function_call') && types.includes('function_call_output'), types.join());
      const fix = captureIo();
      assert.equal(await run(['fix', '--write', file], fix), 0, fix.err());
      assert.equal(await readFile(file, 'utf8'), original);
    });
  }

  for (const poisoning of meta.poisonings.filter((entry) => entry.saved !== null)) {
    test(`${poisoning.name}: found as ${poisoning.rule}; fix --write makes it valid, every untouched line kept`, async () => {
      const { file, original } = await copy(poisoning.saved as string);
      const check = captureIo();
      assert.equal(await run(['check', '--json', file], check), 1);
      const report = JSON.parse(check.out()) as { files: { violations: { rule: string }[] }[] };
      assert.ok(
        report.files[0]?.violations.some((violation) => violation.rule === poisoning.rule),
        JSON.stringify(report.files[0]?.violations),
      );
      const fix = captureIo();
      assert.equal(await run(['fix', '--write', file], fix), 0, fix.err());
      assert.equal(await readFile(`${file}.bak`, 'utf8'), original);
      const fixed = await readFile(file, 'utf8');
      const again = captureIo();
      assert.equal(await run(['check', file], again), 0, again.out());
      const session = codexReader.read(file, fixed);
      assert.deepEqual(checkHistory(session.native, { format: 'responses-input' }), []);
      // Only response_item lines were removed or added; every other line is where it was, byte for byte but for
      // its ordinal (renumbered when a line before it was dropped or added: Codex numbers the lines 0, 1, 2, …).
      const unnumbered = (text: string) =>
        text
          .split('\n')
          .map((line) => line.replace(/^(\{"timestamp":"[^"]*",)"ordinal":\d+,/, '$1'))
          .join('\n');
      const removed = linesOnlyIn(unnumbered(original), unnumbered(fixed));
      const added = linesOnlyIn(unnumbered(fixed), unnumbered(original));
      assert.notEqual(fixed, original, 'the fix changed the file');
      for (const line of [...removed, ...added]) assert.equal(JSON.parse(line).type, 'response_item');
      const others = (text: string) =>
        unnumbered(text)
          .split('\n')
          .filter((line) => line !== '' && JSON.parse(line).type !== 'response_item');
      assert.deepEqual(others(fixed), others(original));
      if (removed.length + added.length === 0) {
        // The repair only moved a line (an output that came before its call now follows it): the same lines, reordered.
        assert.deepEqual(unnumbered(fixed).split('\n').sort(), unnumbered(original).split('\n').sort());
        return;
      }
      const untouched = unnumbered(original)
        .split('\n')
        .filter((line) => !removed.includes(line));
      assert.deepEqual(
        unnumbered(fixed)
          .split('\n')
          .filter((line) => untouched.includes(line)),
        untouched,
        'untouched lines keep their order',
      );
    });
  }

  /** Every line's ordinal and timestamp, and whether they are as Codex writes a paginated rollout: 0, 1, 2, …, times forward. */
  function numbering(text: string): { ordinals: unknown[]; dense: boolean; forward: boolean } {
    const records = text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { ordinal?: unknown; timestamp: string });
    const ordinals = records.map((record) => record.ordinal);
    return {
      ordinals,
      dense: ordinals.every((ordinal, index) => ordinal === index),
      forward: records.every(
        (record, index) => index === 0 || record.timestamp >= (records[index - 1]?.timestamp ?? ''),
      ),
    };
  }

  for (const name of [
    'read-tool-loop.codex-0.171.0.output-before-call.jsonl',
    'read-tool-loop.codex-0.171.0.function-call-recorded-twice.jsonl',
  ])
    test(`${name}: the lines fix writes are numbered as Codex numbers them (ordinal dense from 0, written records' times forward)`, async () => {
      const { file, original } = await copy(name);
      const fix = captureIo();
      assert.equal(await run(['fix', '--write', file], fix), 0, fix.err());
      const fixed = await readFile(file, 'utf8');
      const numbered = numbering(fixed);
      assert.ok(numbered.dense, `ordinals: ${numbered.ordinals.join(',')}`);
      // A line that changed is a response_item the repair touched, or the same record with only its ordinal moved.
      const before = new Set(original.split('\n'));
      const withoutOrdinal = (line: string) => line.replace(/^(\{"timestamp":"[^"]*",)"ordinal":\d+,/, '$1');
      const beforeWithoutOrdinal = new Set(original.split('\n').map(withoutOrdinal));
      // A record fix writes takes the time of the line before it, so its time never goes back; a line the repair
      // only moved (an output put back after its call) keeps its own bytes, time included.
      const lines = fixed.split('\n').filter(Boolean);
      for (const [index, line] of lines.entries()) {
        if (index === 0 || beforeWithoutOrdinal.has(withoutOrdinal(line))) continue;
        const time = (text: string | undefined) => (JSON.parse(text ?? '{}') as { timestamp?: string }).timestamp ?? '';
        assert.ok(time(line) >= time(lines[index - 1]), `a written record's time goes back: ${line.slice(0, 120)}`);
      }
      for (const line of fixed.split('\n').filter((entry) => entry !== '' && !before.has(entry))) {
        const record = JSON.parse(line) as Record<string, unknown>;
        if (record['type'] === 'response_item' && !beforeWithoutOrdinal.has(withoutOrdinal(line))) {
          assert.deepEqual(Object.keys(record).slice(0, 4), ['timestamp', 'ordinal', 'type', 'payload'], line);
          continue;
        }
        assert.ok(beforeWithoutOrdinal.has(withoutOrdinal(line)), `changed beyond its ordinal: ${line.slice(0, 120)}`);
      }
    });

  test('a new record in a rollout without ordinals (legacy history mode) gets none; its time is the line before it', async () => {
    const { original } = await copy('read-tool-loop.codex-0.171.0.jsonl');
    const legacy = original
      .replace('"history_mode":"paginated"', '"history_mode":"legacy"')
      .replace(/,"ordinal":\d+/g, '');
    // The function_call_output line lost (Codex killed while the tool ran).
    const text = legacy
      .split('\n')
      .filter((line) => !line.includes('"type":"function_call_output"'))
      .join('\n');
    const session = codexReader.read('x.jsonl', text);
    const repaired = repairHistory(session.native, { format: 'responses-input' });
    assert.ok(repaired.changed);
    const written = session.write(repaired.messages).split('\n');
    const index = written.findIndex((line) => line.includes('"type":"function_call_output"'));
    const added = JSON.parse(written[index] as string) as Record<string, unknown>;
    assert.deepEqual(Object.keys(added), ['timestamp', 'type', 'payload']);
    assert.equal(added['timestamp'], (JSON.parse(written[index - 1] as string) as { timestamp: string }).timestamp);
    assert.deepEqual(
      written.filter((_, at) => at !== index),
      text.split('\n'),
    );
  });

  test('the output lost in a paginated rollout: the added output takes the next ordinal, every later line moves by one', async () => {
    const { original } = await copy('read-tool-loop.codex-0.171.0.jsonl');
    const lines = original.split('\n');
    const lost = lines.findIndex((line) => line.includes('"type":"function_call_output"'));
    const text = lines.filter((_, at) => at !== lost).join('\n');
    const session = codexReader.read('x.jsonl', text);
    const written = session.write(repairHistory(session.native, { format: 'responses-input' }).messages);
    const numbered = numbering(written);
    assert.ok(numbered.dense, `ordinals: ${numbered.ordinals.join(',')}`);
    assert.ok(numbered.forward);
    assert.equal(written.split('\n').length, lines.length);
  });

  test('a line that does not parse is reported and kept as it is', async () => {
    const { original } = await copy('read-tool-loop.codex-0.171.0.jsonl');
    const text = original.replace('\n', '\n{not json\n');
    const session = codexReader.read('x.jsonl', text);
    assert.equal(session.problems[0]?.line, 2);
    assert.equal(session.write(session.native), text);
  });

  test('--agent codex on a file that is not its session: one error line, exit 2, nothing written', async () => {
    const file = path('other.json');
    await writeFile(file, '[{"role":"user","content":"hi"}]\n');
    const io = captureIo();
    assert.equal(await run(['fix', '--write', '--agent', 'codex', file], io), 2);
    assert.match(io.err(), /^unstuck fix: .*other\.json:1:1: not a Codex rollout.*\n$/);
    assert.equal(io.err().split('\n').length, 2);
    assert.equal(await readFile(file, 'utf8'), '[{"role":"user","content":"hi"}]\n');
  });
});
