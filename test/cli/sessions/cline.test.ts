import assert from 'node:assert/strict';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { run } from '../../../src/cli/run.js';
import { check as checkHistory } from '../../../src/core/check.js';
import { captureIo } from '../../support/capture-io.js';
import { useTemporaryDirectory } from '../helpers.js';

const fixtures = fileURLToPath(new URL('../../fixtures/agents/cline/', import.meta.url));
const CLINE = 'cline-task/tasks/1796150000000/api_conversation_history.json';
const ROO = 'roo-task/tasks/0f0e2c4a-roo/api_conversation_history.json';
const { path } = useTemporaryDirectory('unstuck-cline-');

async function copy(name: string): Promise<{ file: string; original: string }> {
  const original = await readFile(`${fixtures}${name}`, 'utf8');
  const file = path(name);
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, original);
  return { file, original };
}

type Element = Record<string, unknown>;

describe('Cline and Roo Code api_conversation_history.json (shapes from their sources)', () => {
  test('Cline: an interrupted read_file is sent with Cline\'s own "result missing" (its mend): valid, nothing written', async () => {
    const { file, original } = await copy(CLINE);
    const check = captureIo();
    assert.equal(await run(['check', file], check), 0, check.out());
    assert.match(check.out(), /valid for anthropic-messages \(Cline \/ Roo Code session\)/);
    const io = captureIo();
    assert.equal(await run(['fix', '--write', file], io), 0, io.err());
    assert.match(io.err(), /nothing to repair/);
    assert.equal(await readFile(file, 'utf8'), original);
    await assert.rejects(stat(`${file}.bak`));
  });

  test("the same file without Cline's modelInfo (not known to be mended): the read_file answered, every other field kept", async () => {
    const { file } = await copy(CLINE);
    const stripped = (JSON.parse(await readFile(file, 'utf8')) as Element[]).map(({ modelInfo: _, ...rest }) => rest);
    const original = JSON.stringify(stripped);
    await writeFile(file, original);
    const check = captureIo();
    assert.equal(await run(['check', file], check), 1);
    assert.match(check.out(), /tool-calls-unanswered \(toolu_01ReadNotes\)/);
    const io = captureIo();
    assert.equal(await run(['fix', '--write', file], io), 0, io.err());
    assert.equal(await readFile(`${file}.bak`, 'utf8'), original);
    const text = await readFile(file, 'utf8');
    assert.ok(!text.includes('\n'), 'compact JSON, as Cline writes it');
    const fixed = JSON.parse(text) as Element[];
    const before = JSON.parse(original) as Element[];
    assert.deepEqual(fixed[1], before[1], 'the assistant message with its id and metrics is untouched');
    const results = fixed.flatMap((element) =>
      Array.isArray(element['content'])
        ? (element['content'] as Element[]).filter((b) => b['type'] === 'tool_result')
        : [],
    );
    assert.equal(results[0]?.['tool_use_id'], 'toolu_01ReadNotes');
    assert.deepEqual(
      checkHistory(
        fixed.map(({ role, content }) => ({ role, content })),
        { format: 'anthropic-messages' },
      ),
      [],
    );
  });

  test('Roo Code: what the condense hid is not read or touched; the text before the tool_result is moved after it', async () => {
    const { file, original } = await copy(ROO);
    const check = captureIo();
    assert.equal(await run(['check', '--json', file], check), 1);
    const report = JSON.parse(check.out()) as { files: { agent: string; messages: number; violations: Element[] }[] };
    // Three messages are sent (the summary onwards); the condensed call without a result is not one of them.
    assert.equal(report.files[0]?.agent, 'cline');
    assert.equal(report.files[0]?.messages, 3);
    assert.deepEqual(
      report.files[0]?.violations.map((violation) => violation['rule']),
      ['tool-result-not-first'],
    );
    const io = captureIo();
    assert.equal(await run(['fix', '--write', file], io), 0, io.err());
    const fixed = JSON.parse(await readFile(file, 'utf8')) as Element[];
    const before = JSON.parse(original) as Element[];
    assert.equal(fixed.length, before.length);
    assert.deepEqual(fixed.slice(0, 4), before.slice(0, 4));
    assert.equal(fixed[4]?.['ts'], before[4]?.['ts']);
    assert.deepEqual(
      ((fixed[4] as Element)['content'] as Element[]).map((block) => block['type']),
      ['tool_result', 'text'],
    );
  });

  test('a history that is not a JSON array: one clear line, nothing written', async () => {
    const file = path('bad/tasks/1/api_conversation_history.json');
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, '[{"role":"user","content":"hi"},');
    const io = captureIo();
    assert.equal(await run(['fix', '--write', file], io), 2);
    assert.match(io.err(), /^unstuck fix: .*api_conversation_history\.json: not valid JSON: /);
    assert.equal(io.err().split('\n').length, 2);
  });
});

describe('Cline CLI 2.18.0 task files (written by the real program, e2e/agents/cline.ts)', () => {
  const REAL = 'cline-cli-2.18.0/tasks/1796173201706/api_conversation_history.json';
  const TWICE = 'cline-cli-2.18.0.result-twice/tasks/1796173201706/api_conversation_history.json';

  test("read as Cline keeps it: tool_use blocks with Cline's call_id, the results as user text (no tool_result)", async () => {
    const { file, original } = await copy(REAL);
    const messages = JSON.parse(original) as { role: string; content: Element[] }[];
    assert.deepEqual(
      messages.map((message) => `${message.role}:${message.content.map((block) => block['type']).join(',')}`),
      ['user:text,text,text', 'assistant:tool_use', 'user:text,text,text', 'assistant:tool_use'],
    );
    assert.match(String(messages[2]?.content[0]?.['text']), /^\[read_file for '[^']+'\] Result:/);
    // Read as Anthropic Messages the file has two tool_use blocks without a tool_result; Cline sends a "result
    // missing" result for each (ContextManager.ensureToolResultsFollowToolUse, seen on the wire in the e2e), the
    // last one in the resume's own user message. That is what is checked: valid, and fix has nothing to write.
    const io = captureIo();
    assert.equal(await run(['check', '--json', file], io), 0, io.out());
    const report = JSON.parse(io.out()) as { files: { violations: unknown[] }[] };
    assert.deepEqual(report.files[0]?.violations, []);
    const fix = captureIo();
    assert.equal(await run(['fix', '--write', file], fix), 0, fix.err());
    assert.match(fix.err(), /nothing to repair/);
    assert.equal(await readFile(file, 'utf8'), original);
    await assert.rejects(stat(`${file}.bak`));
  });

  test('the result written twice (Cline sends both: 400 tool-result-duplicate): fix --write drops one, the messages before it kept as they were', async () => {
    const { file, original } = await copy(TWICE);
    const fix = captureIo();
    assert.equal(await run(['fix', '--write', file], fix), 0, fix.err());
    assert.match(fix.err(), /result-duplicate-dropped +messages\[2\] call_00_emu1/);
    const before = JSON.parse(original) as Element[];
    const after = JSON.parse(await readFile(file, 'utf8')) as Element[];
    assert.deepEqual(after.slice(0, 2), before.slice(0, 2));
    const blocks = (after[2] as { content: Element[] }).content;
    assert.equal(blocks.filter((block) => block['type'] === 'tool_result').length, 1);
    assert.deepEqual(blocks.slice(1), (before[2] as { content: Element[] }).content.slice(2));
    assert.deepEqual(
      { ...(after[2] as Element), content: undefined },
      { ...(before[2] as Element), content: undefined },
      "the message's own fields (ts) are kept",
    );
    // The last call is left to Cline's mend ("result missing" on resume), not answered in the file.
    assert.equal(after.length, before.length);
    assert.deepEqual(after[3], before[3]);
    const again = captureIo();
    assert.equal(await run(['check', file], again), 0, again.out());
  });

  test("what Cline's mend puts right is not reported: a result behind text, or for a call the message before lacks", async () => {
    const { file, original } = await copy(REAL);
    const messages = JSON.parse(original) as { role: string; content: Element[] }[];
    const user = messages[2] as { content: Element[] };
    user.content = [
      ...user.content,
      { type: 'tool_result', tool_use_id: 'call_00_emu1', content: 'late' },
      { type: 'tool_result', tool_use_id: 'call_elsewhere', content: 'stray' },
    ];
    await writeFile(file, JSON.stringify(messages));
    const io = captureIo();
    assert.equal(await run(['check', file], io), 0, io.out());
    // The same file as Roo Code would have it (no Cline modelInfo): read as stored, both reported.
    await writeFile(file, JSON.stringify(messages.map(({ modelInfo: _, ...rest }: Element) => rest)));
    const roo = captureIo();
    assert.equal(await run(['check', '--json', file], roo), 1);
    const rules = (JSON.parse(roo.out()) as { files: { violations: { rule: string }[] }[] }).files[0]?.violations;
    assert.ok((rules ?? []).length >= 2, roo.out());
  });
});
