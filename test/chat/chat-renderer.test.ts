import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AgentEvent } from '../../src/agent/index.js';
import { createChatRenderer, summarizeArguments } from '../../src/chat/chat-renderer.js';
import { createSpinner } from '../../src/chat/spinner.js';
import { colorWanted, createTerminalStyle } from '../../src/chat/terminal-style.js';

function render(
  events: AgentEvent[],
  options: { color: boolean; separate?: boolean },
): { answer: string; notes: string } {
  let answer = '';
  let notes = '';
  const answerWriter = { write: (text: string) => (answer += text) };
  const notesWriter = options.separate === true ? { write: (text: string) => (notes += text) } : answerWriter;
  const style = createTerminalStyle(options.color);
  const renderer = createChatRenderer({
    answer: answerWriter,
    notes: notesWriter,
    style,
    spinner: createSpinner(notesWriter, { enabled: false, unicode: false }),
    reasoning: true,
    fancy: options.color,
  });
  for (const event of events) renderer.handle(event);
  return { answer, notes };
}

const turn: AgentEvent[] = [
  { type: 'reasoning-delta', text: 'Let me look' },
  { type: 'reasoning-delta', text: ' at the file.' },
  { type: 'tool-call-start', id: 'c1', name: 'read_file', arguments: '{"path":"notes.md"}' },
  { type: 'tool-call-end', id: 'c1', name: 'read_file', result: 'one\ntwo', isError: false },
  { type: 'tool-call-start', id: 'c2', name: 'run_command', arguments: '{"command":"make"}' },
  {
    type: 'tool-call-end',
    id: 'c2',
    name: 'run_command',
    result: 'run_command was not allowed by the user',
    isError: true,
  },
  { type: 'text-delta', text: 'The file has ' },
  { type: 'text-delta', text: 'two lines.' },
  { type: 'turn-end', reason: 'stop' },
];

describe('the chat renderer', () => {
  it('prints plain text without escape codes when colour is off', () => {
    const { answer } = render(turn, { color: false });
    assert.equal(
      answer,
      [
        'thinking: Let me look at the file.',
        '[tool] read_file path="notes.md"',
        '  [done] read_file: 2 lines',
        '    | one',
        '    | two',
        '[tool] run_command command="make"',
        '  [failed] run_command: run_command was not allowed by the user',
        'The file has two lines.',
        '',
      ].join('\n'),
    );
    assert.doesNotMatch(answer, /\x1b/);
  });

  it('dims the reasoning when colour is on', () => {
    const { answer } = render(turn.slice(0, 2), { color: true });
    assert.equal(answer, '\x1b[2mLet me look\x1b[22m\x1b[2m at the file.\x1b[22m');
  });

  it('keeps the answer alone on its stream when notes go elsewhere', () => {
    const { answer, notes } = render([...turn.slice(2, 4), ...turn.slice(6)], { color: false, separate: true });
    assert.equal(answer, 'The file has two lines.\n');
    assert.equal(notes, '[tool] read_file path="notes.md"\n  [done] read_file: 2 lines\n    | one\n    | two\n');
  });

  it('says when a turn was aborted, and what was repaired', () => {
    const { answer } = render(
      [
        {
          type: 'repair',
          changes: [{ kind: 'result-synthesized', index: 4, toolCallId: 'c9', detail: 'answered c9 as not completed' }],
        },
        { type: 'text-delta', text: 'Half an ans' },
        { type: 'turn-end', reason: 'aborted' },
      ],
      { color: false },
    );
    assert.equal(
      answer,
      'repaired the history before sending: 1 change\n  - message 4: result-synthesized: answered c9 as not completed\nHalf an ans\n(turn aborted; the session is kept)\n',
    );
  });

  it("shows a bounded preview of a tool's output, all of it with output: full, and escapes what would drive the terminal", () => {
    const result = [
      'exit code 0',
      ...Array.from({ length: 20 }, (_, index) => `line ${index + 1}`),
      'evil \x1b[2J\x1b]0;pwned\x07 end',
    ].join('\n');
    const events: AgentEvent[] = [
      { type: 'tool-call-start', id: 'c1', name: 'run_command', arguments: '{"command":"make"}' },
      { type: 'tool-call-end', id: 'c1', name: 'run_command', result, isError: false },
    ];
    const { answer } = render(events, { color: false });
    assert.equal(
      answer,
      [
        '[tool] run_command command="make"',
        '  [done] run_command: 22 lines',
        '    | exit code 0',
        '    | line 1',
        '    | line 2',
        '    | line 3',
        '    | ... 16 more lines (/output shows them all)',
        '    | line 20',
        '    | evil \\x1b[2J\\x1b]0;pwned\\x07 end',
        '',
      ].join('\n'),
    );
    assert.doesNotMatch(answer, /\x1b/);
    let full = '';
    const writer = { write: (text: string) => (full += text) };
    const renderer = createChatRenderer({
      answer: writer,
      notes: writer,
      style: createTerminalStyle(false),
      spinner: createSpinner(writer, { enabled: false, unicode: false }),
      reasoning: true,
      fancy: false,
      output: 'full',
    });
    for (const event of events) renderer.handle(event);
    assert.equal(full.split('\n').filter((line) => line.startsWith('    | ')).length, 22);
    assert.deepEqual(renderer.lastOutputs(), [{ name: 'run_command', result }]);
  });

  it("on a terminal, shows the model's control characters instead of obeying them (a bare CR, escapes), keeping lines", () => {
    let out = '';
    const writer = { write: (text: string) => (out += text) };
    const renderer = createChatRenderer({
      answer: writer,
      notes: writer,
      style: createTerminalStyle(false),
      spinner: createSpinner(writer, { enabled: false, unicode: false }),
      reasoning: true,
      fancy: false,
      terminal: true,
    });
    renderer.handle({ type: 'text-delta', text: 'safe\r\nline\tok\rHIDDEN\x1b]0;title\x07\x1b[2J' });
    assert.equal(out, 'safe\nline\tok\\x0dHIDDEN\\x1b]0;title\\x07\\x1b[2J');
    // Not a terminal (one-shot to a file or pipe): the answer is passed on as it is.
    assert.equal(render([{ type: 'text-delta', text: 'a\rb' }], { color: false }).answer, 'a\rb');
  });

  it('shows escapes in model-made names, arguments and provider errors instead of obeying them', () => {
    const { answer } = render(
      [
        { type: 'tool-call-start', id: 'c1', name: 'x\x1b]0;t\x07', arguments: 'not json \x1b[2J' },
        { type: 'error', message: 'HTTP 400: \x1b[31mred' },
      ],
      { color: false },
    );
    assert.doesNotMatch(answer, /\x1b/);
    assert.match(answer, /\[tool\] x\\x1b\]0;t\\x07 not json \\x1b\[2J\nerror: HTTP 400: \\x1b\[31mred/);
  });

  it('summarizes tool arguments on one short line', () => {
    assert.equal(summarizeArguments('{"path":"a.ts","offset":3}'), 'path="a.ts" offset=3');
    assert.equal(summarizeArguments('not json\nat all'), 'not json at all');
    assert.ok(summarizeArguments(JSON.stringify({ content: 'x'.repeat(500) })).length <= 120);
  });

  it('uses colour only on a terminal without NO_COLOR', () => {
    assert.equal(colorWanted({ isTTY: true }, {}), true);
    assert.equal(colorWanted({ isTTY: true }, { NO_COLOR: '1' }), false);
    assert.equal(colorWanted({ isTTY: true }, { NO_COLOR: '' }), true);
    assert.equal(colorWanted({ isTTY: true }, { TERM: 'dumb' }), false);
    assert.equal(colorWanted({ isTTY: false }, {}), false);
  });
});

describe('the chat renderer while a question waits', () => {
  it('keeps tool lines back until the answer, then says what still runs', () => {
    let text = '';
    const writer = { write: (chunk: string) => (text += chunk) };
    const labels: string[] = [];
    const spinner = { start: (label: string) => void labels.push(label), stop: () => undefined, running: false };
    const renderer = createChatRenderer({
      answer: writer,
      notes: writer,
      style: createTerminalStyle(false),
      spinner,
      reasoning: true,
      fancy: false,
    });
    renderer.handle({ type: 'tool-call-start', id: 'a', name: 'read_file', arguments: '{}' });
    renderer.handle({ type: 'tool-call-start', id: 'b', name: 'write_file', arguments: '{}' });
    renderer.hold();
    writer.write('Allow write_file? ');
    renderer.handle({ type: 'tool-call-end', id: 'a', name: 'read_file', result: 'x', isError: false });
    assert.equal(text, '[tool] read_file\n[tool] write_file\nAllow write_file? ');
    writer.write('y\n');
    renderer.release();
    assert.equal(text, '[tool] read_file\n[tool] write_file\nAllow write_file? y\n  [done] read_file: x\n');
    assert.deepEqual(labels, ['running read_file', 'running read_file, write_file', 'running write_file']);
    renderer.handle({ type: 'tool-call-end', id: 'b', name: 'write_file', result: 'ok', isError: false });
    assert.equal(labels.at(-1), 'waiting for the model');
  });
});
