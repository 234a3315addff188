import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { Message } from '../../src/core/messages.js';
import { formatJournal, parseJournal } from '../../src/session/index.js';
import { adversarialSession, asJson, GHOST_MARKER } from './helpers.js';

const SMALL: Message[] = asJson([
  { role: 'user', content: 'line one\r\nline two\u2028 😀 \ud800' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{}' } }],
  },
  { role: 'tool', tool_call_id: 'c1', content: `{"role":"user","content":"pasted"}\n${GHOST_MARKER}` },
  { role: 'assistant', content: '', extra: [1, { deep: null }] },
]);

describe('formatJournal / parseJournal', () => {
  it('round-trips adversarial sessions exactly, one line per message', () => {
    fc.assert(
      fc.property(adversarialSession, (messages) => {
        const text = formatJournal(messages);
        assert.equal(text.split('\n').length - 1, messages.length);
        assert.deepEqual(parseJournal(text), { messages, problems: [] });
      }),
      { numRuns: 400, seed: 3 },
    );
  });

  it('keeps a 1 MB line exactly', () => {
    const messages: Message[] = [
      { role: 'user', content: `${'\ud83d\ude00'.repeat(256 * 1024)}\n${GHOST_MARKER}` },
      { role: 'assistant', content: 'ok' },
    ];
    assert.deepEqual(parseJournal(formatJournal(messages)), { messages, problems: [] });
  });

  it('reports a torn last line and ignores it', () => {
    const text = formatJournal(SMALL);
    const parsed = parseJournal(`${text}{"role":"assistant","content":"cut sh`, { file: 'j.jsonl' });
    assert.deepEqual(parsed.messages, SMALL);
    assert.deepEqual(parsed.problems, [
      {
        file: 'j.jsonl',
        line: SMALL.length + 1,
        why: 'the last line is cut short (an append that did not finish): ignored',
      },
    ]);
  });

  it('names the line of a corrupt line in the middle, and loads the lines around it', () => {
    const lines = formatJournal(SMALL).split('\n');
    lines[1] = lines[1]!.slice(0, 20);
    const parsed = parseJournal(lines.join('\n'), { file: 'j.jsonl' });
    assert.deepEqual(parsed.messages, [SMALL[0], SMALL[2], SMALL[3]]);
    assert.equal(parsed.problems.length, 1);
    assert.equal(parsed.problems[0]!.line, 2);
    assert.match(parsed.problems[0]!.why, /corrupt line/);
  });

  it('does not read two messages from one line', () => {
    const parsed = parseJournal('{"role":"user"},{"role":"user"}\n');
    assert.deepEqual(parsed.messages, []);
    assert.equal(parsed.problems[0]?.line, 1);
  });

  it('lists a line that is JSON but not a message', () => {
    const parsed = parseJournal('{"role":"user"}\n[1,2]\n{"content":"no role"}\n');
    assert.deepEqual(parsed.messages, [{ role: 'user' }]);
    assert.deepEqual(
      parsed.problems.map((problem) => problem.line),
      [2, 3],
    );
  });

  it('survives a file cut at every byte: never throws, keeps every whole message, lists every loss', () => {
    const bytes = Buffer.from(formatJournal(SMALL), 'utf8');
    const lineEnds: number[] = [];
    for (let at = bytes.indexOf(0x0a); at !== -1; at = bytes.indexOf(0x0a, at + 1)) lineEnds.push(at);
    for (let cut = 0; cut <= bytes.length; cut += 1) {
      const parsed = parseJournal(bytes.subarray(0, cut).toString('utf8'), { file: 'j.jsonl' });
      // A line is whole once its JSON is all there, with or without its newline.
      const whole = lineEnds.filter((end) => end <= cut).length;
      assert.deepEqual(parsed.messages, SMALL.slice(0, whole), `cut at ${cut}`);
      const atBoundary = cut === 0 || lineEnds.includes(cut) || lineEnds.includes(cut - 1);
      assert.equal(parsed.problems.length, atBoundary ? 0 : 1, `cut at ${cut}`);
    }
  });
});
