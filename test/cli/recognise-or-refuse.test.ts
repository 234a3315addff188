import assert from 'node:assert/strict';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { run } from '../../src/cli/run.js';
import { recogniseFormat } from '../../src/core/detect-format.js';
import { isMessage } from '../../src/core/messages.js';
import { captureIo } from '../support/capture-io.js';
import { near } from '../support/near-wire-values.js';
import { useTemporaryDirectory } from './helpers.js';

/** Recognise or refuse (docs/decisions/recognise-or-refuse.md), through `check` and `fix`. */
const { path } = useTemporaryDirectory('unstuck-recognise-');

/** `opencode export <session>` (OpenCode 1.18): `{info, messages: [{info, parts}]}`, parts with a `type`. */
function opencodeExport(poisoned: boolean): unknown {
  const tool = {
    id: 'prt_3',
    sessionID: 'ses_1',
    messageID: 'msg_2',
    type: 'tool',
    tool: 'read',
    callID: 'call_1',
    state: { status: 'completed', input: { filePath: 'a.ts' }, output: 'export {}', title: 'a.ts', metadata: {} },
  };
  return {
    info: { id: 'ses_1', title: 'read a file', version: '1.18.33', time: { created: 1, updated: 2 } },
    messages: [
      {
        info: { id: 'msg_1', sessionID: 'ses_1', role: 'user', time: { created: 1 } },
        parts: [{ id: 'prt_1', sessionID: 'ses_1', messageID: 'msg_1', type: 'text', text: 'read a.ts' }],
      },
      {
        info: { id: 'msg_2', sessionID: 'ses_1', role: 'assistant', modelID: 'm', providerID: 'local' },
        parts: [
          { id: 'prt_2', sessionID: 'ses_1', messageID: 'msg_2', type: 'step-start' },
          tool,
          // The poison: the same tool part twice, a 400 on every resume ("Duplicate value for 'tool_call_id'").
          ...(poisoned ? [{ ...tool, id: 'prt_4' }] : []),
          { id: 'prt_5', sessionID: 'ses_1', messageID: 'msg_2', type: 'text', text: 'It exports nothing.' },
          { id: 'prt_6', sessionID: 'ses_1', messageID: 'msg_2', type: 'step-finish', reason: 'stop' },
        ],
      },
      {
        info: { id: 'msg_3', sessionID: 'ses_1', role: 'user', time: { created: 3 } },
        parts: [{ id: 'prt_7', sessionID: 'ses_1', messageID: 'msg_3', type: 'text', text: 'thanks' }],
      },
    ],
  };
}

async function refused(command: string[], file: string): Promise<string> {
  const io = captureIo();
  assert.equal(await run([...command, file], io), 2, `${io.out()}${io.err()}`);
  assert.equal(io.out(), '');
  const lines = io.err().trim().split('\n');
  assert.equal(lines.length, 1, io.err());
  assert.match(io.err(), /not a history unstuck recognises \(/);
  assert.match(io.err(), /--format openai-chat\|anthropic-messages\|gemini-contents\|responses-input or --agent /);
  assert.doesNotMatch(io.err(), /\bvalid\b/);
  return io.err();
}

test('an OpenCode export is read as the OpenCode session it is, on its own evidence (never "valid for gemini-contents"): the duplicated tool part found; its messages array alone is refused', async () => {
  for (const poisoned of [false, true]) {
    const file = path(poisoned ? 'poisoned-export.json' : 'export.json');
    const text = `${JSON.stringify(opencodeExport(poisoned), null, 2)}\n`;
    await writeFile(file, text);
    const io = captureIo();
    const exit = await run(['check', '--json', file], io);
    const report = JSON.parse(io.out()) as {
      files: { agent?: string; format: string; violations: { rule: string }[] }[];
    };
    assert.equal(report.files[0]?.agent, 'opencode', io.out());
    assert.notEqual(report.files[0]?.format, 'gemini-contents');
    assert.equal(exit, poisoned ? 1 : 0, io.out());
    assert.equal(
      report.files[0]?.violations.some((violation) => violation.rule === 'tool-call-id-duplicate'),
      poisoned,
      io.out(),
    );
    // Its messages array on its own is refused: OpenCode's typed parts are not Gemini's.
    const bare = path(poisoned ? 'poisoned-messages.json' : 'messages.json');
    await writeFile(bare, JSON.stringify((opencodeExport(poisoned) as { messages: unknown[] }).messages));
    assert.match(await refused(['check'], bare), /\[0\]\.parts\[0\] has a "type" \("text"\): Gemini parts carry/);
    await refused(['fix'], bare);
    const bareText = await readFile(bare, 'utf8');
    await refused(['fix', '--write'], bare);
    assert.equal(await readFile(bare, 'utf8'), bareText);
    assert.deepEqual(
      (await readdir(dirname(bare))).filter((name) => name.startsWith(bare.split('/').pop() as string)),
      [bare.split('/').pop()],
    );
  }
});

test('documents of no format are refused, each with the reason; damaged ones of a recognised format are checked', async () => {
  const cases: [string, string, RegExp][] = [
    ['empty.json', '[]', /the history is empty/],
    ['object.json', '{}', /an object with no "messages", "contents" or "input" array/],
    ['foo.json', '[{"foo":1}]', /\[0\] has none of the fields/],
    ['note.json', '[{"role":"user","content":"hi"},{"note":"x"}]', /\[1\] has none of the fields/],
    ['empty-body.json', '{"model":"m","messages":[]}', /the history is empty/],
    ['empty-contents.json', '{"contents":[]}', /not gemini-contents: the history is empty/],
    ['embeddings.json', '{"model":"text-embedding-3-small","input":["a","b"]}', /no item has a Responses item type/],
    ['scalar.json', '42', /a number, not a history/],
    ['two-keys.json', '{"messages":[{"role":"user","content":"hi"}],"contents":[]}', /both "messages" and "contents"/],
    ['typed.json', '[{"role":"user","content":"hi"},{"type":"tool_use","role":"assistant"}]', /\[1\] has a "type"/],
    ['empty.jsonl', '', /a \.jsonl file with no line in it/],
    ['README.md', '# Notes\n\nNothing here.\n', /a \.md file with no unstuck transcript message/],
  ];
  for (const [name, text, why] of cases) {
    await writeFile(path(name), text);
    assert.match(await refused(['check'], path(name)), why, name);
  }
  // A recognised chat history with an element that is not a message: refused by name, as before.
  await writeFile(path('junk.json'), '[{"role":"user","content":"hi"},42]');
  const junk = captureIo();
  assert.equal(await run(['check', path('junk.json')], junk), 2);
  assert.match(junk.err(), /message 1: \[1\] is not a message/);
});

test('check --json says which format and what showed it; --format forces one; bad --format is usage', async () => {
  await writeFile(path('chat.json'), '[{"role":"user","content":"hi"}]');
  await writeFile(path('gemini.json'), '{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}');
  const io = captureIo();
  assert.equal(await run(['check', '--json', path('chat.json'), path('gemini.json')], io), 0);
  const files = (JSON.parse(io.out()) as { files: { recognised: unknown }[] }).files;
  assert.deepEqual(
    files.map((file) => file.recognised),
    [
      { as: 'openai-chat', evidence: '[0] has role "user" and a content (openai-chat)' },
      { as: 'gemini-contents', evidence: 'contents[0] has role "user" and parts with Gemini data (gemini-contents)' },
    ],
  );
  // Forced: an empty Gemini body is read as Gemini, whose rules then name it.
  await writeFile(path('forced.json'), '{"contents":[]}');
  const forced = captureIo();
  assert.equal(await run(['check', '--json', '--format', 'gemini-contents', path('forced.json')], forced), 1);
  const entry = (JSON.parse(forced.out()) as { files: { recognised: unknown; violations: { rule: string }[] }[] })
    .files[0];
  assert.deepEqual(entry?.recognised, { as: 'gemini-contents', evidence: '--format gemini-contents' });
  assert.deepEqual(
    entry?.violations.map((violation) => violation.rule),
    ['empty-messages'],
  );
  // One message on one line is a journal of one, forced to chat or not.
  await writeFile(path('one.json'), '{"role":"user","content":"hi"}\n');
  assert.equal(await run(['check', '--format', 'openai-chat', path('one.json')], captureIo()), 0);
  for (const argv of [
    ['check', '--format', 'yaml', path('chat.json')],
    ['check', '--format', 'openai-chat', '--agent', 'codex', path('chat.json')],
  ]) {
    const usage = captureIo();
    assert.equal(await run(argv, usage), 2);
    assert.equal(usage.err().trim().split('\n').length, 1, usage.err());
  }
});

test('a Cline history keeps and reports an element that is not a message (it was silently passed over)', async () => {
  const file = path('api_conversation_history.json');
  await writeFile(
    file,
    JSON.stringify([{ role: 'user', content: 'hi' }, { foo: 1 }, { type: 'reasoning', text: 'r' }]),
  );
  const io = captureIo();
  assert.equal(await run(['check', file], io), 1);
  assert.match(io.out(), /damaged: element 1 is not a message/);
  assert.doesNotMatch(io.out(), /element 2/);
});

test('a chained JSONL whose messages carry Gemini parts is read as Qwen Code, not taken for Claude Code', async () => {
  const file = path('qwen.jsonl');
  const record = (uuid: string, parentUuid: string | null, role: string, text: string) =>
    JSON.stringify({ uuid, parentUuid, sessionId: 's1', type: role, message: { role, parts: [{ text }] } });
  await writeFile(file, `${record('u1', null, 'user', 'hi')}\n${record('u2', 'u1', 'model', 'hello')}\n`);
  const io = captureIo();
  await run(['check', '--json', file], io);
  // Read by the Qwen Code reader (tried before Claude Code's), never taken for a Claude Code session.
  const report = JSON.parse(io.out()) as { files: { agent?: string }[] };
  assert.equal(report.files[0]?.agent, 'qwen-code', io.out());
  assert.doesNotMatch(`${io.out()}${io.err()}`, /Claude Code|claude-code/);
});

test('any JSON document through check: recognised (then checked) or refused with exit 2 in one line, never valid by default', async () => {
  await fc.assert(
    fc.asyncProperty(fc.oneof(fc.jsonValue(), near, fc.array(near, { maxLength: 5 })), async (value) => {
      const io = captureIo({ stdin: JSON.stringify(value) });
      const exit = await run(['check', '-'], io);
      const recognised = recogniseFormat(value);
      // One message object on its own is a journal of one (a string role is its evidence).
      const oneMessage = isMessage(value);
      if (recognised.format === undefined && !oneMessage) {
        assert.equal(exit, 2, io.out());
        assert.equal(io.out(), '');
        assert.equal(io.err().trim().split('\n').length, 1, io.err());
        assert.match(io.err(), /not a history unstuck recognises/);
        return;
      }
      const rules =
        recognised.format === undefined || recognised.format === 'openai-chat' ? 'openai' : recognised.format;
      if (exit === 2) assert.equal(io.err().trim().split('\n').length, 1, io.err());
      else assert.match(io.out(), new RegExp(`^-: (valid|\\d+ problems?) for ${rules} `));
    }),
    { numRuns: 300, seed: 20261202 },
  );
});
