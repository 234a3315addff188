import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { run } from '../../../src/cli/run.js';
import { geminiCliReader } from '../../../src/cli/sessions/gemini-cli.js';
import { check as checkHistory } from '../../../src/core/check.js';
import { repair } from '../../../src/core/repair.js';
import { captureIo } from '../../support/capture-io.js';
import { useTemporaryDirectory } from '../helpers.js';

const fixtures = fileURLToPath(new URL('../../fixtures/agents/gemini-cli/', import.meta.url));
const { path } = useTemporaryDirectory('unstuck-gemini-cli-');

async function copy(name: string): Promise<{ file: string; original: string }> {
  const original = await readFile(`${fixtures}${name}`, 'utf8');
  const file = path(name);
  await writeFile(file, original);
  return { file, original };
}

type Part = Record<string, Record<string, unknown> | undefined>;
type Content = { role: string; parts: Part[] };

/** Each functionCall's id, and how many functionResponses answer it in the turn after its own. */
function responsesPerCall(contents: Content[]): Map<unknown, number> {
  const counts = new Map<unknown, number>();
  contents.forEach((content, index) => {
    for (const part of content.parts) {
      if (part['functionCall'] === undefined) continue;
      const id = part['functionCall']['id'];
      const next = contents[index + 1]?.parts ?? [];
      counts.set(id, next.filter((candidate) => candidate['functionResponse']?.['id'] === id).length);
    }
  });
  return counts;
}

const removedLines = (before: string, after: string) => {
  const kept = new Set(after.split('\n'));
  return before.split('\n').filter((line) => !kept.has(line));
};

describe('Gemini CLI 0.61.0 chat files (written by the real binary)', () => {
  test('as written: found broken (tool-results-excess); fixed, it resumes with one functionResponse per call', async () => {
    const { file, original } = await copy('read-tool-loop.gemini-cli-0.61.0.as-written.jsonl');
    const before = geminiCliReader.read(file, original);
    assert.ok(geminiCliReader.detect(file, original));
    assert.deepEqual([...responsesPerCall(before.native as Content[]).values()], [2], 'what Gemini CLI sends today');
    const check = captureIo();
    assert.equal(await run(['check', '--json', file], check), 1);
    const report = JSON.parse(check.out()) as { files: { agent: string; violations: { rule: string }[] }[] };
    assert.deepEqual(
      report.files[0]?.violations.map((violation) => violation.rule),
      ['tool-results-excess'],
    );
    const fix = captureIo();
    assert.equal(await run(['fix', '--write', file], fix), 0, fix.err());
    assert.equal(await readFile(`${file}.bak`, 'utf8'), original);
    const fixed = await readFile(file, 'utf8');
    const after = geminiCliReader.read(file, fixed);
    assert.deepEqual([...responsesPerCall(after.native as Content[]).values()], [1]);
    assert.deepEqual(checkHistory(after.native, { format: 'gemini-contents' }), []);
    // The repair is the user record repeating the result, removed (what meta.json's response-record-removed resumed).
    const removed = removedLines(original, fixed);
    assert.equal(removed.length, 1);
    assert.equal(JSON.parse(removed[0] as string).type, 'user');
    assert.deepEqual(removedLines(fixed, original), [], 'no line added or rewritten');
    const again = captureIo();
    assert.equal(await run(['check', file], again), 0, again.out());
  });

  test('the session context and the record written twice under one id are read as Gemini CLI does', async () => {
    const { file, original } = await copy('read-tool-loop.gemini-cli-0.61.0.jsonl');
    const session = geminiCliReader.read(file, original);
    const contents = session.native as Content[];
    assert.deepEqual(
      contents.map((content) => content.role),
      ['user', 'model', 'user', 'model'],
    );
    assert.equal(contents[0]?.parts[0]?.['text' as never], 'What does notes.txt say?');
    assert.equal(session.write(session.native), original, 'printed back byte for byte');
  });

  for (const [name, rule] of [
    ['read-tool-loop.gemini-cli-0.61.0.result-lost.jsonl', 'tool-calls-unanswered'],
    ['read-tool-loop.gemini-cli-0.61.0.call-record-duplicated.jsonl', 'tool-results-excess'],
    ['read-tool-loop.gemini-cli-0.61.0.empty-answer-text.jsonl', 'tool-results-excess'],
    ['parallel-read.gemini-cli-0.61.0.jsonl', 'tool-results-excess'],
  ] as const) {
    test(`${name}: ${rule} found (what the resume got); fix --write makes it valid, other lines kept`, async () => {
      const { file, original } = await copy(name);
      const check = captureIo();
      assert.equal(await run(['check', '--json', file], check), 1);
      const report = JSON.parse(check.out()) as { files: { violations: { rule: string }[] }[] };
      assert.ok(
        report.files[0]?.violations.some((violation) => violation.rule === rule),
        check.out(),
      );
      const fix = captureIo();
      assert.equal(await run(['fix', '--write', file], fix), 0, fix.err());
      const fixed = await readFile(file, 'utf8');
      const after = geminiCliReader.read(file, fixed);
      assert.deepEqual(checkHistory(after.native, { format: 'gemini-contents' }), []);
      for (const count of responsesPerCall(after.native as Content[]).values()) assert.equal(count, 1);
      const originalLines = original.split('\n');
      const fixedLines = new Set(fixed.split('\n'));
      const kept = originalLines.filter((line) => fixedLines.has(line));
      assert.ok(kept.length >= originalLines.length - 1, 'at most one line removed or rewritten');
      for (const line of [...originalLines.filter((line) => !fixedLines.has(line)), ...removedLines(fixed, original)])
        assert.ok(JSON.parse(line).id, 'only message records change');
    });
  }

  test('a $set.messages checkpoint is edited in place when the record to change is in it', async () => {
    const { original } = await copy('read-tool-loop.gemini-cli-0.61.0.as-written.jsonl');
    // Everything up to the final answer folded into one checkpoint, as Gemini CLI writes on compression/rewind.
    const lines = original.trimEnd().split('\n');
    const messages = new Map<string, unknown>();
    for (const line of lines.slice(1)) {
      const value = JSON.parse(line) as Record<string, unknown>;
      if (typeof value['id'] === 'string') messages.set(value['id'], value);
      else if (Array.isArray((value['$set'] as Record<string, unknown>)['messages']))
        for (const message of (value['$set'] as { messages: { id: string }[] }).messages)
          messages.set(message.id, message);
    }
    const text = `${lines[0]}\n${JSON.stringify({ $set: { messages: [...messages.values()] } })}\n`;
    const session = geminiCliReader.read('x.jsonl', text);
    const result = repair(session.native, { format: 'gemini-contents' });
    const written = session.write(result.messages);
    const again = geminiCliReader.read('x.jsonl', written);
    assert.deepEqual(checkHistory(again.native, { format: 'gemini-contents' }), []);
    assert.equal(written.split('\n')[0], lines[0]);
    assert.equal(written.trimEnd().split('\n').length, 2);
  });

  test('--agent gemini-cli on a file that is not its session: one error line, exit 2, nothing written', async () => {
    const file = path('other.json');
    await writeFile(file, '[{"role":"user","content":"hi"}]\n');
    const io = captureIo();
    assert.equal(await run(['fix', '--write', '--agent', 'gemini-cli', file], io), 2);
    assert.match(io.err(), /^unstuck fix: .*other\.json:1:1: not a Gemini CLI chat.*\n$/);
    assert.equal(io.err().split('\n').length, 2);
    assert.equal(await readFile(file, 'utf8'), '[{"role":"user","content":"hi"}]\n');
  });
});
