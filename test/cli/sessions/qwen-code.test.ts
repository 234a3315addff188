import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { run } from '../../../src/cli/run.js';
import { readAgentSession } from '../../../src/cli/sessions/agent-readers.js';
import { qwenCodeReader } from '../../../src/cli/sessions/qwen-code.js';
import { sessionHomes } from '../../../src/cli/sessions/session-homes.js';
import { check } from '../../../src/core/check.js';
import { captureIo } from '../../support/capture-io.js';
import { useTemporaryDirectory } from '../helpers.js';

const fixtures = fileURLToPath(new URL('../../fixtures/agents/qwen-code/', import.meta.url));
const NAME = 'read-tool-loop.qwen-code-0.24.4';
const OUTPUT = 'The secret word is lighthouse.';
const { path } = useTemporaryDirectory('unstuck-qwen-code-');

async function copy(poisoning?: string, as?: string): Promise<{ file: string; original: string }> {
  const name = poisoning === undefined ? `${NAME}.jsonl` : `${NAME}.${poisoning}.jsonl`;
  const original = await readFile(`${fixtures}${name}`, 'utf8');
  const file = path(as ?? name);
  await writeFile(file, original);
  return { file, original };
}

type Rec = Record<string, any>;
const records = (text: string): Rec[] =>
  text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Rec);

/** The chain Qwen Code resumes: from the last record back through parentUuid, root first. */
function chainOf(text: string): Rec[] {
  const all = records(text);
  const byUuid = new Map(all.map((record) => [record['uuid'], record]));
  const chain: Rec[] = [];
  for (let record = all.at(-1); record !== undefined; record = byUuid.get(record['parentUuid'])) {
    chain.push(record);
    if (record['parentUuid'] === null) break;
  }
  return chain.reverse();
}

/** Every output that reaches the wire: tool messages' and user messages' text. */
function textsSent(file: string, text: string): string[] {
  const session = readAgentSession(file, text) as NonNullable<ReturnType<typeof readAgentSession>>;
  return (session.native as Rec[])
    .filter((message) => message['role'] === 'tool' || message['role'] === 'user')
    .map((message) =>
      typeof message['content'] === 'string' ? message['content'] : JSON.stringify(message['content']),
    );
}

describe('Qwen Code 0.24.4 chat files (written by the real binary)', () => {
  test('recognised as Qwen Code (not as Claude Code, whose records also have uuid and parentUuid), read as OpenAI chat', async () => {
    const { file, original } = await copy();
    assert.ok(qwenCodeReader.detect(file, original));
    const session = readAgentSession(file, original);
    assert.ok(session !== undefined);
    assert.equal(session.agent, 'qwen-code');
    assert.equal(session?.wire, 'openai-chat');
    assert.deepEqual(
      (session.native as Rec[]).map((message) => message['role']),
      ['user', 'assistant', 'tool', 'assistant'],
    );
    assert.deepEqual(check(session?.native ?? [], { format: 'openai-chat' }), []);
    assert.equal((session.native as Rec[])[2]?.['content'], `${OUTPUT}\n`);
    assert.deepEqual(session?.sources, [[1], [4], [6], [8]]);
    const io = captureIo();
    assert.equal(await run(['check', '--json', file], io), 0, io.err());
    const report = JSON.parse(io.out()) as { files: { agent: string; violations: unknown[] }[] };
    assert.equal(report.files[0]?.agent, 'qwen-code');
    assert.deepEqual(report.files[0]?.violations, []);
    const fix = captureIo();
    assert.equal(await run(['fix', '--write', file], fix), 0, fix.err());
    assert.match(fix.err(), /valid, nothing to repair/);
    assert.equal(await readFile(file, 'utf8'), original);
    assert.equal(existsSync(`${file}.bak`), false);
  });

  for (const poisoning of ['result-for-another-id', 'result-without-id', 'call-without-id', 'result-after-the-answer'])
    test(`${poisoning}: Qwen Code's own mend drops the real output; fix --write keeps it, only the records it needed rewritten`, async () => {
      const { file, original } = await copy(poisoning);
      const io = captureIo();
      assert.equal(await run(['check', file], io), 1, `found broken: ${io.err()}${io.out()}`);
      const fix = captureIo();
      assert.equal(await run(['fix', '--write', file], fix), 0, fix.err());
      assert.equal(await readFile(`${file}.bak`, 'utf8'), original);
      const fixed = await readFile(file, 'utf8');
      assert.ok(fixed.endsWith('\n'));
      const session = readAgentSession(file, fixed);
      assert.deepEqual(check(session?.native ?? [], { format: 'openai-chat' }), [], 'the fixed file reads valid');
      assert.ok(
        textsSent(file, fixed).some((text) => text.includes(OUTPUT)),
        'the real tool output is still in what Qwen Code will send',
      );
      // Every line of the poisoned file that is still there is the same bytes, or the same record with only
      // message.parts or parentUuid changed; new records have uuids of their own.
      const before = new Map(records(original).map((record, index) => [record['uuid'], original.split('\n')[index]]));
      const beforeLines = new Set(original.split('\n'));
      const strip = (record: Rec) => {
        const { parentUuid: _parent, message, ...rest } = record;
        const { parts: _parts, ...messageRest } = (message ?? {}) as Rec;
        return JSON.stringify({ ...rest, message: messageRest });
      };
      let rewritten = 0;
      for (const line of fixed.split('\n').filter(Boolean)) {
        if (beforeLines.has(line)) continue;
        const record = JSON.parse(line) as Rec;
        const old = before.get(record['uuid']);
        if (old === undefined) continue;
        rewritten += 1;
        assert.equal(strip(record), strip(JSON.parse(old) as Rec), `only parts and links change in ${record['uuid']}`);
      }
      assert.ok(rewritten <= 2, `${rewritten} records rewritten`);
      const uuids = records(fixed).map((record) => record['uuid']);
      assert.equal(new Set(uuids).size, uuids.length, 'no uuid twice');
      // The chain from the newest record reaches the first prompt, through every message record.
      const chain = chainOf(fixed);
      assert.equal(chain[0]?.['parentUuid'], null);
      assert.equal(chain.length, records(fixed).length, 'every record is on the chain Qwen Code resumes');
      const again = captureIo();
      assert.equal(await run(['fix', file], again), 0);
      assert.match(again.err(), /valid, nothing to repair/);
    });

  test('result-lost: a new tool_result record (fresh uuid) answers the call, linked between the call and its child', async () => {
    const { file, original } = await copy('result-lost');
    const fix = captureIo();
    assert.equal(await run(['fix', '--write', file], fix), 0, fix.err());
    assert.match(fix.err(), /result-synthesized/);
    const fixed = await readFile(file, 'utf8');
    const added = records(fixed).filter((record) => !original.includes(record['uuid']));
    assert.equal(added.length, 1);
    const [record] = added as [Rec];
    assert.equal(record['type'], 'tool_result');
    assert.equal(record['sessionId'], records(original)[0]?.['sessionId']);
    const call = records(original).find(
      (entry) => entry['type'] === 'assistant' && entry['message'].parts[0].functionCall,
    );
    assert.equal(record['parentUuid'], call?.['uuid']);
    const response = record['message'].parts[0].functionResponse;
    assert.equal(response.id, call?.['message'].parts[0].functionCall.id);
    assert.match(response.response.error, /did not complete/);
    const child = records(fixed).find((entry) => entry['parentUuid'] === record['uuid']);
    assert.ok(child !== undefined, 'the record after it hangs from it');
    assert.equal(chainOf(fixed).length, records(fixed).length);
  });

  test('a fixed file reads the same records in the same order, but for the added one (no line moved needlessly)', async () => {
    const { file, original } = await copy('result-without-id');
    assert.equal(await run(['fix', '--write', file], captureIo()), 0);
    const fixed = await readFile(file, 'utf8');
    assert.deepEqual(
      records(fixed).map((record) => record['uuid']),
      records(original).map((record) => record['uuid']),
    );
    const changed = fixed.split('\n').filter((line, index) => line !== original.split('\n')[index]);
    assert.equal(changed.length, 1, 'only the result record is rewritten (its id)');
  });

  test('parallel calls: each result its own tool_result record; the second given another id, fix keeps both outputs', async () => {
    const original = await readFile(`${fixtures}parallel-read.qwen-code-0.24.4.jsonl`, 'utf8');
    const file = path('parallel.jsonl');
    const session = readAgentSession(file, original);
    assert.deepEqual(
      ((session?.native ?? []) as Rec[]).map((message) => message['role']),
      ['user', 'assistant', 'tool', 'tool', 'assistant'],
    );
    assert.deepEqual(check(session?.native ?? [], { format: 'openai-chat' }), []);
    const lines = original.split('\n');
    const at = lines.findLastIndex((line) => line.includes('"type":"tool_result"'));
    const record = JSON.parse(lines[at] as string) as Rec;
    record['message'].parts[0].functionResponse.id = 'call_elsewhere';
    lines[at] = JSON.stringify(record);
    await writeFile(file, lines.join('\n'));
    const fix = captureIo();
    assert.equal(await run(['fix', '--write', file], fix), 0, fix.err());
    const fixed = await readFile(file, 'utf8');
    const texts = textsSent(file, fixed);
    assert.ok(texts.some((text) => text.includes(OUTPUT)));
    assert.ok(texts.some((text) => text.includes('The other word is harbour.')));
    assert.equal(chainOf(fixed).length, records(fixed).length);
  });

  test('a chat_compression record: the history is its compressedHistory, then what follows; a repair inside it is refused', async () => {
    const { original } = await copy('result-lost');
    const all = records(original);
    const first = all[0] as Rec;
    const call = all.find((record) => record['type'] === 'assistant' && record['message'].parts[0].functionCall) as Rec;
    // A compression whose summary ends with the call, its result lost; after it, the rest of the chain.
    const compression = {
      uuid: 'c0000000-0000-4000-8000-000000000001',
      parentUuid: first['uuid'],
      sessionId: first['sessionId'],
      timestamp: first['timestamp'],
      type: 'system',
      subtype: 'chat_compression',
      systemPayload: {
        info: { originalTokenCount: 100, newTokenCount: 10 },
        compressedHistory: [
          { role: 'user', parts: [{ text: 'Summary of earlier turns.' }] },
          { role: 'model', parts: [{ text: 'Understood.' }] },
        ],
      },
    };
    const text = `${JSON.stringify(first)}\n${JSON.stringify(compression)}\n${JSON.stringify({ ...call, parentUuid: compression.uuid })}\n`;
    const file = path('compressed.jsonl');
    await writeFile(file, text);
    const session = readAgentSession(file, text);
    assert.deepEqual(
      ((session?.native ?? []) as Rec[]).map((message) => message['role']),
      ['user', 'assistant', 'assistant'],
      'the summary, then the call: the first prompt is in the summary, not sent again',
    );
    assert.deepEqual(session?.sources, [[2], [2], [3]]);
    // The call is answered by a new record after it (outside the compression): written.
    const fix = captureIo();
    assert.equal(await run(['fix', '--write', file], fix), 0, fix.err());
    const fixed = await readFile(file, 'utf8');
    assert.equal(records(fixed).length, 4);
    assert.equal(records(fixed)[3]?.['type'], 'tool_result');
    // A summary that itself ends with an unanswered call: the repair would have to change the compression. Refused.
    const inside = {
      ...compression,
      systemPayload: {
        ...compression.systemPayload,
        compressedHistory: [
          { role: 'user', parts: [{ text: 'Summary.' }] },
          { role: 'model', parts: [{ functionCall: { id: 'call_x', name: 'read_file', args: {} } }] },
          { role: 'user', parts: [{ text: 'go on' }] },
        ],
      },
    };
    const refused = path('compressed-inside.jsonl');
    const insideText = `${JSON.stringify(first)}\n${JSON.stringify(inside)}\n`;
    await writeFile(refused, insideText);
    const io = captureIo();
    assert.equal(await run(['fix', '--write', refused], io), 2);
    assert.match(
      io.err(),
      /compressed-inside\.jsonl:2: the repair would change the history inside a chat_compression record/,
    );
    assert.equal(await readFile(refused, 'utf8'), insideText);
    assert.equal(existsSync(`${refused}.bak`), false);
  });

  test('a slash command answered locally: its prompt is not in the history Qwen Code sends', async () => {
    const { original } = await copy();
    const all = records(original);
    const first = all[0] as Rec;
    const base = {
      sessionId: first['sessionId'],
      timestamp: first['timestamp'],
      cwd: first['cwd'],
      version: first['version'],
    };
    const command = {
      uuid: 'a0000000-0000-4000-8000-000000000001',
      parentUuid: null,
      ...base,
      type: 'user',
      message: { role: 'user', parts: [{ text: '/stats' }] },
    };
    const result = {
      uuid: 'a0000000-0000-4000-8000-000000000002',
      parentUuid: command.uuid,
      ...base,
      type: 'system',
      subtype: 'slash_command',
      systemPayload: {
        phase: 'result',
        rawCommand: '/stats',
        outputHistoryItems: [{ type: 'assistant', text: 'stats' }],
      },
    };
    const lines = original.split('\n');
    lines[0] = JSON.stringify({ ...first, parentUuid: result.uuid });
    const text = [JSON.stringify(command), JSON.stringify(result), ...lines].join('\n');
    const session = readAgentSession(path('slash.jsonl'), text);
    assert.deepEqual(
      ((session?.native ?? []) as Rec[]).map((message) => message['role']),
      ['user', 'assistant', 'tool', 'assistant'],
    );
    assert.deepEqual(((session?.native ?? []) as Rec[])[0]?.['content'], [
      { type: 'text', text: 'What does notes.txt say?' },
    ]);
    assert.deepEqual(session?.problems, []);
  });

  test('--agent qwen-code on a file that is no Qwen Code chat: one line naming the file, exit 2, nothing written', async () => {
    const file = path('not-qwen.jsonl');
    await writeFile(file, '{"role":"user","content":"hi"}\n');
    const io = captureIo();
    assert.equal(await run(['fix', '--write', '--agent', 'qwen-code', file], io), 2);
    assert.match(io.err(), /not-qwen\.jsonl:1:1: not a Qwen Code chat/);
    assert.equal(io.err().trim().split('\n').length, 1);
    assert.equal(existsSync(`${file}.bak`), false);
  });

  test('a line that does not parse is kept as it is and reported; the rest is still read and fixed', async () => {
    const { original } = await copy('result-lost');
    const file = path('torn.jsonl');
    await writeFile(file, `${original}{"uuid":"torn`);
    const fix = captureIo();
    assert.equal(await run(['fix', '--write', file], fix), 1);
    assert.match(fix.err(), /damaged .*torn\.jsonl:8: not valid JSON/);
    const fixed = await readFile(file, 'utf8');
    assert.ok(fixed.endsWith('{"uuid":"torn'), 'the torn line is kept');
  });

  test('fix --write refuses while Qwen Code holds the file open for writing', {
    skip: !existsSync('/proc/self/fd'),
  }, async () => {
    const { file, original } = await copy('result-lost', 'held.jsonl');
    const child = spawn(
      process.execPath,
      ['-e', `require('fs').openSync(${JSON.stringify(file)}, 'a'); console.log('open'); setInterval(() => {}, 1000);`],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      await once(child.stdout as NodeJS.ReadableStream, 'data');
      const io = captureIo();
      assert.equal(await run(['fix', '--write', file], io), 2);
      assert.match(io.err(), /is open for writing by process \d+ \(node\): not replaced, nothing written/);
      assert.equal(await readFile(file, 'utf8'), original);
      assert.equal(existsSync(`${file}.bak`), false);
    } finally {
      child.kill();
    }
  });

  test("scan finds Qwen Code's chats in ~/.qwen/projects/*/chats/, or under QWEN_HOME / QWEN_RUNTIME_DIR", async () => {
    const home = path('home');
    const chats = join(home, '.qwen', 'projects', '-work-project', 'chats');
    await mkdir(chats, { recursive: true });
    await writeFile(join(chats, 'a.jsonl'), await readFile(`${fixtures}${NAME}.result-for-another-id.jsonl`, 'utf8'));
    const io = captureIo({ env: { HOME: home } });
    assert.equal(await run(['scan', '--json'], io), 1, io.err());
    const report = JSON.parse(io.out()) as { sessions: { file: string; agent?: string; violations?: unknown[] }[] };
    const found = report.sessions.find((entry) => entry.file.endsWith('a.jsonl'));
    assert.ok(found !== undefined, io.out());
    assert.equal(found.agent, 'qwen-code');
    assert.deepEqual(
      sessionHomes({ HOME: '/h', QWEN_HOME: '/q' }).find((entry) => entry.agent === 'Qwen Code')?.path,
      '/q/projects',
    );
    assert.deepEqual(
      sessionHomes({ HOME: '/h', QWEN_HOME: '/q', QWEN_RUNTIME_DIR: '/r' }).find((entry) => entry.agent === 'Qwen Code')
        ?.path,
      '/r/projects',
    );
    assert.deepEqual(
      sessionHomes({ HOME: '/h' }).find((entry) => entry.agent === 'Qwen Code')?.path,
      '/h/.qwen/projects',
    );
  });
});
