import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { run } from '../../src/cli/run.js';
import { check } from '../../src/index.js';
import { captureIo } from '../support/capture-io.js';

/** check and fix read Anthropic, Gemini and Responses histories, apply their rules, and write them back in their own wire. */
let directory = '';
const path = (name: string) => join(directory, name);
before(async () => {
  directory = await mkdtemp(join(tmpdir(), 'unstuck-cli-formats-'));
});
after(async () => {
  await rm(directory, { recursive: true, force: true });
});

const corpus = async (name: string) =>
  (
    JSON.parse(await readFile(new URL(`../fixtures/shared/corpus/${name}`, import.meta.url), 'utf8')) as {
      messages: unknown[];
    }
  ).messages;

describe('Anthropic Messages', () => {
  test('a request body with top-level system: check names the violation as Anthropic does; fix writes the body back with its system', async () => {
    const messages = await corpus('032-anthropic-parallel-tool-results-as-separate-user-messages.json');
    await writeFile(
      path('anthropic.json'),
      JSON.stringify({ model: 'claude-sonnet-4-5', system: 'be brief', max_tokens: 1024, messages }, null, 2),
    );
    const checked = captureIo();
    assert.equal(await run(['check', path('anthropic.json')], checked), 1);
    assert.match(checked.out(), /2 problems for anthropic-messages \(4 messages\)/);
    assert.match(
      checked.out(),
      /messages\[3\]\s+tool-results-split \(toolu_B\): messages\.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_B/,
    );
    const fixed = captureIo();
    assert.equal(await run(['fix', path('anthropic.json')], fixed), 0);
    const body = JSON.parse(fixed.out()) as { system: string; max_tokens: number; messages: unknown[] };
    assert.equal(body.system, 'be brief');
    assert.equal(body.max_tokens, 1024);
    assert.equal(body.messages.length, 3);
    assert.deepEqual(check(body.messages, { format: 'anthropic-messages' }), []);
    assert.match(fixed.err(), /messages-merged\s+messages\[3\]/);
  });

  test('a bare array is detected by its blocks; --thinking on finds the missing thinking block and fix says why it stays', async () => {
    await writeFile(
      path('thinking.json'),
      JSON.stringify(await corpus('033-anthropic-thinking-blocks-dropped-before-tool-use.json')),
    );
    const io = captureIo();
    assert.equal(await run(['check', '--json', '--thinking', 'on', path('thinking.json')], io), 1);
    const report = JSON.parse(io.out()) as { files: { wire: string; violations: { rule: string }[] }[] };
    assert.equal(report.files[0]?.wire, 'anthropic-messages');
    assert.deepEqual(
      report.files[0]?.violations.map((violation) => violation.rule),
      // The corpus's placeholder ids (`toolu_…`) are off the API's id pattern too.
      ['tool-call-id-format', 'thinking-block-missing'],
    );
    const off = captureIo();
    assert.equal(await run(['check', '--json', path('thinking.json')], off), 1);
    assert.deepEqual(
      (JSON.parse(off.out()) as { files: { violations: { rule: string }[] }[] }).files[0]?.violations.map(
        (violation) => violation.rule,
      ),
      ['tool-call-id-format'],
      'thinking off: only the placeholder id',
    );
    const fixed = captureIo();
    assert.equal(await run(['fix', '--thinking', 'on', path('thinking.json')], fixed), 1);
    assert.match(fixed.err(), /REMAINING thinking-block-missing messages\[1\]: .*signature/);
  });
});

describe('Gemini contents', () => {
  test('{ contents }: checked and fixed as Gemini, --write keeps the request body and FILE.bak', async () => {
    const contents = await corpus('031-adk-instruction-inserted-between-call-and-response.json');
    const original = JSON.stringify({ contents, generationConfig: { temperature: 0 } });
    await writeFile(path('gemini.json'), original);
    const checked = captureIo();
    assert.equal(await run(['check', path('gemini.json')], checked), 1);
    assert.match(checked.out(), /for gemini-contents \(4 contents\)/);
    assert.match(
      checked.out(),
      /contents\[3\]\s+tool-result-orphan: Please ensure that function response turn comes immediately after a function call turn\./,
    );
    assert.equal(await run(['fix', '--write', path('gemini.json')], captureIo()), 0);
    assert.equal(await readFile(path('gemini.json.bak'), 'utf8'), original);
    const body = JSON.parse(await readFile(path('gemini.json'), 'utf8')) as {
      contents: unknown[];
      generationConfig: unknown;
    };
    assert.deepEqual(body.generationConfig, { temperature: 0 });
    assert.deepEqual(check(body.contents, { format: 'gemini-contents' }), []);
    assert.equal(await run(['check', path('gemini.json')], captureIo()), 0);
  });

  test('a damaged array (a turn without parts, junk) is still read as Gemini, and repaired', async () => {
    await writeFile(
      path('damaged-contents.json'),
      JSON.stringify([
        { role: 'user', parts: [{ text: 'q' }] },
        { role: 'model' },
        42,
        { role: 'model', parts: [{ text: 'a' }] },
      ]),
    );
    const checked = captureIo();
    assert.equal(await run(['check', path('damaged-contents.json')], checked), 1);
    assert.match(
      checked.out(),
      /contents\[1\]\s+content-empty: \* GenerateContentRequest\.contents\[1\]\.parts: contents\.parts must not be empty\./,
    );
    assert.match(checked.out(), /contents\[2\]\s+message-malformed/);
    const fixed = captureIo();
    assert.equal(await run(['fix', path('damaged-contents.json')], fixed), 0);
    assert.deepEqual(JSON.parse(fixed.out()), [
      { role: 'user', parts: [{ text: 'q' }] },
      { role: 'model', parts: [{ text: 'a' }] },
    ]);
  });

  test('a bare array of { role, parts }', async () => {
    await writeFile(
      path('contents.json'),
      JSON.stringify(await corpus('028-gemini-passthrough-leading-function-response.json')),
    );
    const io = captureIo();
    assert.equal(await run(['fix', '--json', path('contents.json')], io), 0);
    const report = JSON.parse(io.out()) as {
      wire: string;
      messages: unknown[];
      changes: { kind: string; index: number }[];
      after: unknown[];
    };
    assert.equal(report.wire, 'gemini-contents');
    assert.deepEqual(
      report.changes.map((change) => [change.kind, change.index]),
      [['orphan-to-user', 0]],
    );
    assert.deepEqual(check(report.messages, { format: 'gemini-contents' }), []);
  });
});

describe('Responses input', () => {
  test('{ input }: the duplicate function_call item is dropped and the body written back', async () => {
    const input = await corpus('044-responses-api-duplicate-function-call-item-hitl.json');
    await writeFile(path('responses.json'), JSON.stringify({ model: 'gpt-5', input, store: false }));
    const checked = captureIo();
    assert.equal(await run(['check', path('responses.json')], checked), 1);
    assert.match(checked.out(), /input\[2\]\s+tool-call-id-duplicate \(fc_…\): Duplicate item found with id fc_…/);
    const fixed = captureIo();
    assert.equal(await run(['fix', path('responses.json')], fixed), 0);
    const body = JSON.parse(fixed.out()) as { model: string; store: boolean; input: unknown[] };
    assert.equal(body.store, false);
    assert.equal(body.input.length, 3);
    assert.match(fixed.err(), /item-dropped\s+input\[2\]/);
  });

  test('a bare array of items; a valid one is printed byte for byte', async () => {
    await writeFile(path('items.json'), JSON.stringify(await corpus('045-responses-api-unpaired-function-call.json')));
    const io = captureIo();
    assert.equal(await run(['fix', path('items.json')], io), 0);
    assert.deepEqual(check(JSON.parse(io.out()) as unknown[], { format: 'responses-input' }), []);
    const text =
      '[{"role":"user","content":"q"},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"ok"}]\n';
    await writeFile(path('valid-items.json'), text);
    const valid = captureIo();
    assert.equal(await run(['fix', path('valid-items.json')], valid), 0);
    assert.equal(valid.out(), text);
    assert.match(valid.err(), /valid, nothing to repair/);
  });
});

test('OpenAI chat stays OpenAI chat: plain text histories and tool_calls with tool_use parts (corpus 043) are not taken for Anthropic', async () => {
  await writeFile(
    path('hybrid.json'),
    JSON.stringify(await corpus('043-hybrid-message-tool-use-in-content-and-tool-calls.json')),
  );
  await writeFile(
    path('plain.json'),
    JSON.stringify(await corpus('022-anthropic-multiple-user-roles-in-chat-thread.json')),
  );
  const io = captureIo();
  await run(['check', '--json', path('hybrid.json'), path('plain.json')], io);
  const report = JSON.parse(io.out()) as { files: { wire?: string }[] };
  assert.deepEqual(
    report.files.map((file) => file.wire),
    [undefined, undefined],
  );
});
