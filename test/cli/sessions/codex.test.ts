import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { run } from '../../../src/cli/run.js';
import { codexReader } from '../../../src/cli/sessions/codex.js';
import { check as checkHistory } from '../../../src/core/check.js';
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
      // Only response_item lines were removed or added; every other line is where it was, byte for byte.
      const removed = linesOnlyIn(original, fixed);
      const added = linesOnlyIn(fixed, original);
      assert.notEqual(fixed, original, 'the fix changed the file');
      for (const line of [...removed, ...added]) assert.equal(JSON.parse(line).type, 'response_item');
      const others = (text: string) =>
        text.split('\n').filter((line) => line !== '' && JSON.parse(line).type !== 'response_item');
      assert.deepEqual(others(fixed), others(original));
      if (removed.length + added.length === 0) {
        // The repair only moved a line (an output that came before its call now follows it): the same lines, reordered.
        assert.deepEqual(fixed.split('\n').sort(), original.split('\n').sort());
        return;
      }
      const untouched = original.split('\n').filter((line) => !removed.includes(line));
      assert.deepEqual(
        fixed.split('\n').filter((line) => untouched.includes(line)),
        untouched,
        'untouched lines keep their order',
      );
    });
  }

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
