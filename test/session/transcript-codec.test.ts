import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { describe, it } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import type { Message } from '../../src/core/messages.js';
import { formatTranscript, parseTranscript } from '../../src/session/index.js';
import { countProblems, parseTranscriptBytes } from '../../src/session/transcript-reader.js';
import { formatTranscriptBytes, formatTranscriptText } from '../../src/session/transcript-writer.js';
import { adversarialSession, asJson, DUMPED_SESSION, DUMPED_WITH_LINE_NUMBERS, GHOST_MARKER } from './helpers.js';

const SMALL: Message[] = asJson([
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Show me the session file.\n```\nan unclosed fence' },
  {
    role: 'assistant',
    content: null,
    reasoning_content: 'read it',
    tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{"path":"s.md"}' } }],
  },
  { role: 'tool', tool_call_id: 'c1', content: `${GHOST_MARKER}\n  12 | ${GHOST_MARKER}` },
  { role: 'assistant', content: 'Done 😀', x_unknown: { kept: true } },
]);

describe('formatTranscript / parseTranscript', () => {
  it('round-trips adversarial sessions exactly, with no problems', () => {
    fc.assert(
      fc.property(adversarialSession, (messages) => {
        const parsed = parseTranscript(formatTranscript(messages));
        assert.deepEqual(parsed.problems, []);
        assert.deepStrictEqual(parsed.messages, messages);
      }),
      { numRuns: 400, seed: 7 },
    );
  });

  it('writes the same file as bytes (for the store) as it does as text, wherever it splits them', () => {
    const big: Message = { role: 'tool', tool_call_id: 'c1', content: `${'会话 '.repeat(200_000)}\ud800` }; // larger than one buffer of bytes
    fc.assert(
      fc.property(adversarialSession, fc.boolean(), fc.integer({ min: 1, max: 50 }), (messages, withBig, first) => {
        const session = withBig ? [...messages, big, ...messages] : messages;
        const options = {
          first,
          total: session.length + first - 1,
          segments:
            first > 1 ? [{ file: 's.seg-0123456789abcdef.md', messages: first - 1, sha256: 'a'.repeat(64) }] : [],
        };
        const bytes = Buffer.concat(formatTranscriptBytes(session, options));
        assert.ok(bytes.equals(Buffer.from(formatTranscriptText(session, options), 'utf8')));
      }),
      { numRuns: 150, seed: 11 },
    );
  });

  it('writes a readable file: a heading per message, tool calls as fenced JSON, tool results fenced', () => {
    const text = formatTranscript(SMALL);
    assert.match(text, /^## 1 · system$/m);
    assert.match(text, /^## 3 · assistant$/m);
    assert.match(text, /^\*\*Tool call\*\* `read_file` · `c1`\n\n```json\n\{"path":"s.md"\}\n```$/m);
    assert.match(text, /^## 4 · tool · `c1`$/m);
    assert.match(text, /^Done 😀$/m);
    // Exactly one whole-line marker per message: content markers were escaped.
    assert.equal(text.split('\n').filter((line) => line.startsWith('<!-- nf-msg ')).length, SMALL.length);
  });

  it('shortens long tool results in the readable part only', () => {
    const long = `${'line\n'.repeat(5000)}end`;
    const messages = [{ role: 'tool', tool_call_id: 'c', content: long }];
    const text = formatTranscript(messages);
    const readable = text
      .split('\n')
      .filter((line) => !line.startsWith('<!-- nf-msg '))
      .join('\n');
    assert.ok(readable.length < 3000, 'the readable copy is shortened');
    assert.match(text, /more characters, kept in the marker below/);
    assert.deepEqual(parseTranscript(text).messages, messages);
  });

  it('keeps a 1 MB line with markers in it exactly', () => {
    const megabyte = `${'x'.repeat(512 * 1024)}${GHOST_MARKER}\n${GHOST_MARKER}\n  12 | ${GHOST_MARKER}${'é'.repeat(512 * 1024)}`;
    const messages: Message[] = [
      { role: 'user', content: megabyte },
      { role: 'tool', tool_call_id: 'c', content: megabyte },
    ];
    assert.deepEqual(parseTranscript(formatTranscript(messages)), { messages, problems: [] });
  });

  it('loads a NexForgeCLI-style file: no header, and an old dump left unescaped inside a fenced tool result', () => {
    const marker = (message: Message) => `<!-- nf-msg ${Buffer.from(JSON.stringify(message)).toString('base64')} -->`;
    const messages: Message[] = [
      { role: 'user', content: 'read the old session' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'dump' },
    ];
    const text = [
      '### user',
      'read the old session',
      marker(messages[0]!),
      '',
      '### assistant',
      marker(messages[1]!),
      '',
      '### tool',
      '```',
      GHOST_MARKER,
      GHOST_MARKER,
      '```',
      marker(messages[2]!),
      '',
    ].join('\n');
    assert.deepEqual(parseTranscript(text), { messages, problems: [] });
  });

  it('loads a file whose line breaks were converted to CRLF (git autocrlf), text or bytes', () => {
    const crlf = formatTranscript(SMALL).replaceAll('\n', '\r\n');
    assert.deepEqual(parseTranscript(crlf), { messages: SMALL, problems: [] });
    const parsed = parseTranscriptBytes(Buffer.from(crlf, 'utf8'), 'x.md');
    assert.deepEqual({ messages: parsed.messages, problems: parsed.problems }, { messages: SMALL, problems: [] });
  });

  it('reads a marker only when it is a whole line', () => {
    const text = `${formatTranscript([])}  12 | ${GHOST_MARKER}\nsee ${GHOST_MARKER}\n`;
    assert.deepEqual(parseTranscript(text).messages, []);
  });

  it('survives a file cut at every byte: never throws, keeps every whole message, lists every loss', () => {
    const bytes = Buffer.from(formatTranscript(SMALL), 'utf8');
    const markerEnds: number[] = [];
    const text = bytes.toString('latin1');
    for (let at = text.indexOf('<!-- nf-msg '); at !== -1; at = text.indexOf('<!-- nf-msg ', at + 1))
      markerEnds.push(text.indexOf(' -->', at) + 4);
    assert.equal(markerEnds.length, SMALL.length);
    for (let cut = 0; cut <= bytes.length; cut += 1) {
      const whole = markerEnds.filter((end) => end <= cut).length;
      // As text (the codec) and as bytes (what the store reads, with its fast path).
      const fromBytes = parseTranscriptBytes(bytes.subarray(0, cut), 's.md');
      for (const parsed of [
        parseTranscript(bytes.subarray(0, cut).toString('utf8'), { file: 's.md' }),
        {
          messages: fromBytes.messages,
          problems: [...fromBytes.problems, ...countProblems('s.md', fromBytes.declared, fromBytes.messages.length)],
        },
      ]) {
        assert.deepEqual(parsed.messages, SMALL.slice(0, whole), `cut at ${cut}`);
        if (cut > 0 && whole < SMALL.length)
          assert.ok(parsed.problems.length > 0, `cut at ${cut}: a lost message must be listed`);
        for (const problem of parsed.problems) {
          assert.equal(problem.file, 's.md');
          assert.ok(problem.why.length > 0);
        }
      }
    }
  });

  it('recovers every intact message around a damaged byte, and lists the damage', () => {
    const bytes = Buffer.from(formatTranscript(SMALL), 'utf8');
    const latin = bytes.toString('latin1');
    const markerSpans: { start: number; end: number }[] = [];
    for (
      let start = latin.indexOf('\n<!-- nf-msg ') + 1;
      start > 0;
      start = latin.indexOf('\n<!-- nf-msg ', start) + 1
    ) {
      markerSpans.push({ start, end: latin.indexOf('\n', start) });
    }
    assert.equal(markerSpans.length, SMALL.length);
    fc.assert(
      fc.property(fc.nat(bytes.length - 1), fc.constantFrom(0x60, 0x7e, 0x0a, 0x3c, 0x41, 0xff, 0x20), (at, value) => {
        const damaged = Buffer.from(bytes);
        damaged[at] = value;
        const parsed = at % 2 === 0 ? parseTranscript(damaged.toString('utf8')) : parseTranscriptBytes(damaged, 'x.md');
        // Whatever differs from the original (a lost message, or a marker whose payload still
        // decodes after the damage) is listed; the header's digest catches the second kind.
        if (!isDeepStrictEqual(parsed.messages, SMALL))
          assert.ok(parsed.problems.length > 0, `damage at ${at} is listed`);
        // Every message whose marker line the damage missed comes back.
        // (A marker line is hit when the damage is on it or on the line breaks around it.)
        const intact = SMALL.filter(
          (_message, index) => at < markerSpans[index]!.start - 1 || at > markerSpans[index]!.end,
        );
        for (const message of intact)
          assert.ok(
            parsed.messages.some((candidate) => isDeepStrictEqual(candidate, message)),
            `damage at ${at}: an intact message was lost`,
          );
      }),
      { numRuns: 500, seed: 11 },
    );
  });

  it('names the line of a damaged marker', () => {
    const text = formatTranscript(SMALL).replace(/^(<!-- nf-msg )(....)/m, '$1!!!!');
    const parsed = parseTranscript(text, { file: 'x.md' });
    assert.equal(parsed.messages.length, SMALL.length - 1);
    const line = text.split('\n').findIndex((candidate) => candidate.startsWith('<!-- nf-msg !!!!')) + 1;
    assert.ok(
      parsed.problems.some((problem) => problem.line === line && /base64/.test(problem.why)),
      JSON.stringify(parsed.problems),
    );
  });

  it('reads a session whose markers fill many decoding groups in order, and a bad marker in one loses only its message', () => {
    // About 334 K base64 characters of markers: eight groups of the reader's 43 K, one marker (80 K) larger than a group.
    const messages: Message[] = asJson([
      ...Array.from({ length: 300 }, (_unused, index) => ({
        role: index % 2 === 0 ? 'user' : 'assistant',
        content: `${index}: ${'会话 text '.repeat(20 + (index % 7) * 10)}`,
      })),
      { role: 'tool', tool_call_id: 'big', content: 'x'.repeat(60_000) },
      { role: 'user', content: 'last' },
    ]);
    const text = formatTranscript(messages);
    for (const parsed of [parseTranscript(text), parseTranscriptBytes(Buffer.from(text), 'x.md')])
      assert.deepEqual({ messages: parsed.messages, problems: parsed.problems }, { messages, problems: [] });
    const lines = text.split('\n');
    const markerLines = lines.flatMap((line, index) => (line.startsWith('<!-- nf-msg ') ? [index] : []));
    const hit = markerLines[150]!;
    lines[hit] = lines[hit]!.replace('<!-- nf-msg ', '<!-- nf-msg !!!!');
    const parsed = parseTranscriptBytes(Buffer.from(lines.join('\n')), 'x.md');
    assert.deepEqual(
      parsed.messages,
      messages.filter((_message, index) => index !== 150),
    );
    assert.ok(
      parsed.problems.some((problem) => problem.line === hit + 1 && /base64/.test(problem.why)),
      JSON.stringify(parsed.problems),
    );
  });

  it('says so when a text has no markers at all', () => {
    const parsed = parseTranscript('# Notes\n\nnothing here\n');
    assert.deepEqual(parsed.messages, []);
    assert.equal(parsed.problems.length, 1);
  });

  it('keeps a whole session file pasted into a message, with and without line numbers, as content', () => {
    const messages: Message[] = [
      { role: 'user', content: DUMPED_SESSION },
      { role: 'tool', tool_call_id: 'c', content: DUMPED_WITH_LINE_NUMBERS },
    ];
    assert.deepEqual(parseTranscript(formatTranscript(messages)), { messages, problems: [] });
  });
});
