import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { run } from '../../../src/cli/run.js';
import { claudeCodeReader } from '../../../src/cli/sessions/claude-code.js';
import { check as checkHistory } from '../../../src/core/check.js';
import { repair as repairHistory } from '../../../src/core/repair.js';
import { captureIo } from '../../support/capture-io.js';
import { useTemporaryDirectory } from '../helpers.js';

const fixtures = fileURLToPath(new URL('../../fixtures/agents/claude-code/', import.meta.url));
const fixture = (name: string) => readFile(`${fixtures}${name}`, 'utf8');
const LOOP = 'read-tool-loop.claude-code-2.1.332.jsonl';
const { path } = useTemporaryDirectory('unstuck-claude-code-');

type Event = Record<string, unknown>;
const events = (text: string): Event[] =>
  text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as Event];
      } catch {
        return [];
      }
    });

/** Every parentUuid names an event of the file (or is null). */
function assertLinksResolve(text: string): void {
  const all = events(text);
  const uuids = new Set(all.flatMap((event) => (typeof event['uuid'] === 'string' ? [event['uuid']] : [])));
  for (const event of all)
    if (typeof event['parentUuid'] === 'string')
      assert.ok(uuids.has(event['parentUuid']), `parentUuid ${event['parentUuid']} resolves`);
}

/** The lines of `before` that are not in `after` (a line kept byte for byte is in both). */
const linesGone = (before: string, after: string) => {
  const kept = new Set(after.split('\n'));
  return before.split('\n').filter((line) => !kept.has(line));
};

describe('Claude Code session files (real files of Claude Code 2.1.332)', () => {
  test('the chain read is what Claude Code sent: one assistant message per message.id, parallel results in one user message', async () => {
    const session = claudeCodeReader.read('p.jsonl', await fixture('parallel-read.claude-code-2.1.332.jsonl'));
    const shape = session.native.map((message) => {
      const { role, content } = message as { role: string; content: unknown };
      return `${role}[${Array.isArray(content) ? content.map((block) => (block as { type: string }).type).join(',') : 'string'}]`;
    });
    // The request the e2e run logged: user[...] assistant[thinking,text,tool_use,tool_use] user[tool_result,tool_result]
    assert.deepEqual(shape, [
      'user[string]',
      'assistant[thinking,text,tool_use,tool_use]',
      'user[tool_result,tool_result]',
      'assistant[thinking,text]',
    ]);
    assert.deepEqual(session.sources[2], [21, 22]);
    assert.deepEqual(checkHistory(session.native, { format: 'anthropic-messages' }), []);
  });

  test('a valid session: check says valid, fix prints the file byte for byte', async () => {
    for (const name of [LOOP, 'parallel-read.claude-code-2.1.332.jsonl']) {
      const io = captureIo();
      assert.equal(await run(['check', `${fixtures}${name}`], io), 0, io.err());
      assert.match(io.out(), /valid for anthropic-messages \(Claude Code session\) \(4 messages\)/);
      const fixed = captureIo();
      assert.equal(await run(['fix', `${fixtures}${name}`], fixed), 0);
      assert.equal(fixed.out(), await fixture(name));
    }
  });

  test('text before the tool_result: fix --write rewrites that one event, keeps every other line and a .bak', async () => {
    const original = await fixture('read-tool-loop.claude-code-2.1.332.text-before-tool-result.jsonl');
    const file = path('text-before.jsonl');
    await writeFile(file, original);
    const check = captureIo();
    assert.equal(await run(['check', file], check), 1);
    assert.match(check.out(), /messages\[2\]\s+tool-result-not-first/);

    const io = captureIo();
    assert.equal(await run(['fix', '--write', file], io), 0, io.err());
    const fixed = await readFile(file, 'utf8');
    assert.equal(await readFile(`${file}.bak`, 'utf8'), original);
    const gone = linesGone(original, fixed);
    assert.equal(gone.length, 1, 'one line changed');
    const before = JSON.parse(gone[0] as string) as Event;
    const after = events(fixed).find((event) => event['uuid'] === before['uuid']) as Event;
    // Only message.content changed: every other field, in its order, is the same.
    assert.deepEqual(Object.keys(after), Object.keys(before));
    assert.deepEqual({ ...after, message: null }, { ...before, message: null });
    assert.deepEqual(
      ((after['message'] as Event)['content'] as Event[]).map((block) => block['type']),
      ['tool_result', 'text'],
    );
    assert.equal(fixed.split('\n').length, original.split('\n').length);
    assertLinksResolve(fixed);
    const again = captureIo();
    assert.equal(await run(['check', file], again), 0, again.out());
  });

  test('a result lost and a truncated line: a new result event with a fresh uuid is linked in, the damaged line kept as it is', async () => {
    const lines = (await fixture(LOOP)).split('\n');
    // Drop the tool_result event (line 19) and hang the attachment after it (line 20) from the call's event.
    const resultEvent = JSON.parse(lines[18] as string) as Event;
    const attachment = JSON.parse(lines[19] as string) as Event;
    attachment['parentUuid'] = resultEvent['parentUuid'];
    const truncated = '{"parentUuid":"x","type":"user","mess';
    const poisoned = [...lines.slice(0, 18), JSON.stringify(attachment), ...lines.slice(20, -1), truncated, ''].join(
      '\n',
    );
    const file = path('lost-result.jsonl');
    await writeFile(file, poisoned);

    const check = captureIo();
    assert.equal(await run(['check', file], check), 1);
    assert.match(check.out(), /lost-result\.jsonl:25 {2}damaged: not valid JSON/);
    assert.match(check.out(), /tool-calls-unanswered \(toolu_emu1_00\)/);

    const io = captureIo();
    // Exit 1: the damaged line is still there (kept, reported), though every violation is repaired.
    assert.equal(await run(['fix', '--write', file], io), 1, io.err());
    const fixed = await readFile(file, 'utf8');
    assert.ok(fixed.split('\n').includes(truncated), 'the truncated line is kept byte for byte');
    assertLinksResolve(fixed);
    const originalUuids = new Set(events(poisoned).map((event) => event['uuid']));
    const added = events(fixed).filter((event) => !originalUuids.has(event['uuid']));
    assert.equal(added.length, 1);
    const event = added[0] as Event;
    assert.match(String(event['uuid']), /^[0-9a-f-]{36}$/);
    assert.equal(event['sessionId'], resultEvent['sessionId']);
    assert.equal(event['type'], 'user');
    const block = ((event['message'] as Event)['content'] as Event[])[0] as Event;
    assert.equal(block['type'], 'tool_result');
    assert.equal(block['tool_use_id'], 'toolu_emu1_00');
    // The repaired chain is what the repair made, and it is valid.
    const reread = claudeCodeReader.read(file, fixed);
    assert.deepEqual(checkHistory(reread.native, { format: 'anthropic-messages' }), []);
  });

  /** The session cut after the call's event (line 18: a crash mid-tool), then `after`, then a last-prompt naming it. */
  async function cutAtCall(after: (lines: string[], call: Event) => string[]): Promise<{ text: string; call: Event }> {
    const lines = (await fixture(LOOP)).split('\n');
    const call = JSON.parse(lines[17] as string) as Event;
    assert.equal(((call['message'] as Event)['content'] as Event[])[0]?.['type'], 'tool_use');
    const prompt = JSON.stringify({
      type: 'last-prompt',
      lastPrompt: 'What does notes.txt say?',
      leafUuid: call['uuid'],
      sessionId: call['sessionId'],
    });
    return { text: `${[...lines.slice(0, 18), ...after(lines, call), prompt].join('\n')}\n`, call };
  }

  /** The rows nothing hangs from, walked up to their user/assistant row: the leaves Claude Code can resume from. */
  function leaves(text: string): Set<unknown> {
    const all = events(text).filter((event) => typeof event['uuid'] === 'string');
    const byUuid = new Map(all.map((event) => [event['uuid'], event]));
    const parents = new Set(all.map((event) => event['parentUuid']));
    const found = new Set<unknown>();
    for (const terminal of all.filter((event) => !parents.has(event['uuid']))) {
      let row: Event | undefined = terminal;
      while (row !== undefined && row['type'] !== 'user' && row['type'] !== 'assistant')
        row = byUuid.get(row['parentUuid']);
      if (row !== undefined) found.add(row['uuid']);
    }
    return found;
  }

  test("the result added after the leaf: last-prompt's leafUuid names the new event, so Claude Code resumes from it", async () => {
    const { text, call } = await cutAtCall(() => []);
    const session = claudeCodeReader.read('cut.jsonl', text);
    const written = session.write(repairHistory(session.native, { format: 'anthropic-messages' }).messages);
    const added = events(written).find((event) => event['parentUuid'] === call['uuid']) as Event;
    assert.equal(added['type'], 'user');
    const prompt = events(written).find((event) => event['type'] === 'last-prompt') as Event;
    assert.equal(prompt['leafUuid'], added['uuid']);
    assert.deepEqual(leaves(written), new Set([added['uuid']]));
    assertLinksResolve(written);
  });

  test('an attachment after the leaf (as Claude Code writes a prompt_snapshot): the added event hangs from it, leaving one leaf', async () => {
    const { text, call } = await cutAtCall((lines, call) => {
      const attachment = JSON.parse(lines[19] as string) as Event;
      assert.equal(attachment['type'], 'attachment');
      return [JSON.stringify({ ...attachment, parentUuid: call['uuid'] })];
    });
    const attachment = events(text).findLast((event) => event['type'] === 'attachment') as Event;
    const session = claudeCodeReader.read('cut.jsonl', text);
    const written = session.write(repairHistory(session.native, { format: 'anthropic-messages' }).messages);
    const added = events(written).find((event) => event['parentUuid'] === attachment['uuid']) as Event;
    assert.ok(added !== undefined, 'the added result hangs from the attachment, as Claude Code links its next event');
    assert.deepEqual(leaves(written), new Set([added['uuid']]), `the call ${call['uuid']} is no leaf any more`);
    assert.equal(
      (events(written).find((event) => event['type'] === 'last-prompt') as Event)['leafUuid'],
      added['uuid'],
    );
    // Every line but the last-prompt is byte for byte; the new event is the one line more.
    assert.deepEqual(
      linesGone(text, written).map((line) => (JSON.parse(line) as Event)['type']),
      ['last-prompt'],
    );
    const reread = claudeCodeReader.read('cut.jsonl', written);
    assert.deepEqual(checkHistory(reread.native, { format: 'anthropic-messages' }), []);
  });

  test('a message the repair moved keeps its own events (same uuids, same bytes but the link), linked where it went', async () => {
    const text = await fixture(LOOP);
    const session = claudeCodeReader.read('loop.jsonl', text);
    const [user, call, result, answer] = session.native;
    const written = session.write([user, answer, call, result]);
    const uuids = (value: string) => events(value).map((event) => event['uuid']);
    assert.deepEqual(new Set(uuids(written)), new Set(uuids(text)), 'no event added or lost');
    assertLinksResolve(written);
    const reread = claudeCodeReader.read('loop.jsonl', written);
    assert.deepEqual(reread.native, [user, answer, call, result]);
    // Only links changed: the moved message's first event, and the events that followed either place.
    const changed = linesGone(text, written).map((line) => JSON.parse(line) as Event);
    const [lastPrompt, ...linked] = [
      changed.filter((event) => event['type'] === 'last-prompt'),
      ...changed.filter((event) => event['type'] !== 'last-prompt'),
    ];
    for (const event of linked as Event[]) {
      const now = events(written).find((other) => other['uuid'] === event['uuid']) as Event;
      assert.deepEqual({ ...now, parentUuid: null }, { ...event, parentUuid: null });
    }
    assert.equal(linked.length, 2, "the answer's first event and the call's first event, which now follows it");
    // The leaf Claude Code resumes from is the moved result's event now, the newest on the chain.
    assert.equal((lastPrompt as Event[]).length, 1);
    const resultEvent = reread.sources.at(-1)?.at(-1) as number;
    const leafNow = JSON.parse(written.split('\n')[resultEvent - 1] as string) as Event;
    const promptNow = events(written).find((event) => event['type'] === 'last-prompt') as Event;
    assert.equal(promptNow['leafUuid'], leafNow['uuid']);
  });

  test('side chains, other branches and unknown line types are not read and are kept byte for byte', async () => {
    const lines = (await fixture('read-tool-loop.claude-code-2.1.332.text-before-tool-result.jsonl')).split('\n');
    const sidechain = JSON.stringify({
      parentUuid: null,
      isSidechain: true,
      type: 'assistant',
      message: {
        id: 'msg_side',
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'toolu_side', name: 'Read', input: {} }],
      },
      uuid: '00000000-0000-4000-8000-00000000side'.replace('side', '0001'),
      sessionId: 's',
    });
    const unknown = '{"type":"some-future-line","sessionId":"s","payload":{"x":[1,2,3]}}';
    const poisoned = [...lines.slice(0, 5), sidechain, unknown, ...lines.slice(5)].join('\n');
    const file = path('sidechain.jsonl');
    await writeFile(file, poisoned);
    const io = captureIo();
    assert.equal(await run(['fix', '--write', file], io), 0, io.err());
    // The side chain's unanswered call is not on the chain sent, so not repaired; only the poisoned event changed.
    assert.equal(io.err().match(/^ {2}\S/gm)?.length, 1, io.err());
    const fixed = await readFile(file, 'utf8');
    assert.ok(fixed.split('\n').includes(sidechain));
    assert.ok(fixed.split('\n').includes(unknown));
    assert.equal(linesGone(poisoned, fixed).length, 1);
  });

  test('after a compaction boundary, only the chain from the boundary is sent: what came before is not read', async () => {
    const poisoned = await fixture('read-tool-loop.claude-code-2.1.332.text-before-tool-result.jsonl');
    const leaf = events(poisoned).findLast((event) => event['type'] === 'assistant') as Event;
    const common = { isSidechain: false, sessionId: leaf['sessionId'], timestamp: leaf['timestamp'] };
    const boundary = {
      ...common,
      parentUuid: null,
      logicalParentUuid: leaf['uuid'],
      type: 'system',
      subtype: 'compact_boundary',
      content: 'Conversation compacted',
      uuid: '00000000-0000-4000-8000-00000000b001',
    };
    const summary = {
      ...common,
      parentUuid: boundary.uuid,
      type: 'user',
      isCompactSummary: true,
      message: { role: 'user', content: 'Summary: the user asked what notes.txt says; it says lighthouse.' },
      uuid: '00000000-0000-4000-8000-00000000b002',
    };
    const answer = {
      ...common,
      parentUuid: summary.uuid,
      type: 'assistant',
      message: { id: 'msg_after', role: 'assistant', content: [{ type: 'text', text: 'Noted.' }] },
      uuid: '00000000-0000-4000-8000-00000000b003',
    };
    const text = `${poisoned}${[boundary, summary, answer].map((event) => JSON.stringify(event)).join('\n')}\n`;
    const file = path('compacted.jsonl');
    await writeFile(file, text);
    const io = captureIo();
    assert.equal(await run(['check', file], io), 0, io.out());
    assert.match(io.out(), /\(2 messages\)/);
    const fixed = captureIo();
    assert.equal(await run(['fix', file], fixed), 0);
    assert.equal(fixed.out(), text);
  });

  test('--agent forces the reader; an unknown agent is one usage line', async () => {
    const file = path('named-otherwise.log');
    await writeFile(file, await fixture(LOOP));
    const io = captureIo();
    assert.equal(await run(['check', '--agent', 'claude-code', file], io), 0, io.err());
    assert.match(io.out(), /Claude Code session/);
    const bad = captureIo();
    assert.equal(await run(['check', '--agent', 'nope', file], bad), 2);
    assert.match(
      bad.err(),
      /^unstuck check: --agent takes claude-code, cline, codex, gemini-cli, opencode, qwen-code, not 'nope'\n$/,
    );
  });

  test('a file with no user or assistant event, forced as Claude Code: one clear line', async () => {
    const file = path('empty-session.jsonl');
    await writeFile(file, '{"type":"queue-operation","sessionId":"s"}\n');
    const io = captureIo();
    assert.equal(await run(['check', file], io), 2);
    assert.match(io.err(), /empty-session\.jsonl:1: a Claude Code session with no user or assistant event\n$/);
  });
});
