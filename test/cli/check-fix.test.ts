import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { checkCommand } from '../../src/cli/commands/check.js';
import { fixCommand } from '../../src/cli/commands/fix.js';
import { formatUsage, run } from '../../src/cli/run.js';
import { check, type Message } from '../../src/index.js';
import { formatTranscript } from '../../src/session/index.js';
import { captureIo } from '../support/capture-io.js';

const broken: Message[] = [
  { role: 'user', content: 'q' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } }],
  },
  { role: 'user', content: 'next' },
];
const valid: Message[] = [
  { role: 'user', content: 'q' },
  { role: 'assistant', content: 'a' },
];
let directory = '';
const path = (name: string) => join(directory, name);

before(async () => {
  directory = await mkdtemp(join(tmpdir(), 'unstuck-cli-'));
});
after(async () => {
  await rm(directory, { recursive: true, force: true });
});

describe('unstuck check', () => {
  test('exit 0 for a valid file, 1 for violations, with --json in the documented shape', async () => {
    await writeFile(path('valid.json'), JSON.stringify(valid));
    await writeFile(path('broken.json'), JSON.stringify(broken, null, 2));
    const ok = captureIo();
    assert.equal(await run(['check', path('valid.json')], ok), 0);
    assert.match(ok.out(), /valid for openai \(2 messages\)/);
    const io = captureIo();
    assert.equal(await run(['check', '--json', path('valid.json'), path('broken.json')], io), 1);
    const report = JSON.parse(io.out()) as {
      files: {
        file: string;
        format: string;
        messages: number;
        violations: { rule: string; index: number; toolCallId?: string; message: string }[];
      }[];
    };
    assert.deepEqual(
      report.files.map((f) => [f.format, f.messages, f.violations.length]),
      [
        ['json-array', 2, 0],
        ['json-array', 3, 1],
      ],
    );
    assert.deepEqual(report.files[1]?.violations[0], check(broken)[0]);
  });

  test('request bodies, JSONL and Markdown sessions are detected', async () => {
    await writeFile(path('body.json'), JSON.stringify({ model: 'deepseek-chat', messages: broken, temperature: 0 }));
    await writeFile(path('lines.jsonl'), `${broken.map((m) => JSON.stringify(m)).join('\n')}\n`);
    await writeFile(path('session.md'), formatTranscript(broken));
    const io = captureIo();
    assert.equal(await run(['check', '--json', path('body.json'), path('lines.jsonl'), path('session.md')], io), 1);
    const report = JSON.parse(io.out()) as { files: { format: string; violations: unknown[] }[] };
    assert.deepEqual(
      report.files.map((f) => [f.format, f.violations.length]),
      [
        ['request-body', 1],
        ['jsonl', 1],
        ['markdown', 1],
      ],
    );
  });

  test('bad input: one line naming file and position, exit 2, no stack trace', async () => {
    await writeFile(path('bad.json'), '[\n  {"role": "user",\n   "content": tru }\n]');
    await writeFile(path('shape.json'), JSON.stringify([{ role: 'user', content: 'x' }, 42]));
    const cases: [string, RegExp][] = [
      [path('bad.json'), /bad\.json:3:18: not valid JSON/],
      [path('shape.json'), /shape\.json:message 1: \[1\] is not a message/],
      [path('missing.json'), /missing\.json: cannot read: no such file/],
    ];
    for (const [file, pattern] of cases) {
      const io = captureIo();
      assert.equal(await run(['check', file], io), 2);
      assert.match(io.err(), pattern);
      assert.equal(io.err().trim().split('\n').length, 1, io.err());
      assert.doesNotMatch(io.err(), /\n\s+at /);
    }
  });

  test('usage errors exit 2', async () => {
    const io = captureIo();
    assert.equal(await run(['check', '--profile', 'nope', path('valid.json')], io), 2);
    assert.match(io.err(), /unknown profile 'nope'/);
    assert.equal(await run(['check'], captureIo()), 2);
    assert.equal(await run(['check', '--bogus'], captureIo()), 2);
  });

  test('stdin with -', async () => {
    const io = captureIo({ stdin: JSON.stringify(broken) });
    assert.equal(await run(['check', '-'], io), 1);
    assert.match(io.out(), /tool-calls-unanswered \(a\)/);
  });
});

describe('unstuck fix', () => {
  test('prints the repaired document in its own container; changes on stderr; exit 0', async () => {
    await writeFile(path('body2.json'), JSON.stringify({ model: 'm', messages: broken, stream: true }, null, 2));
    const io = captureIo();
    assert.equal(await run(['fix', path('body2.json')], io), 0);
    const body = JSON.parse(io.out()) as { model: string; stream: boolean; messages: Message[] };
    assert.equal(body.model, 'm');
    assert.equal(body.stream, true);
    assert.deepEqual(check(body.messages), []);
    assert.match(io.out(), /^\{\n {2}"model"/, 'keeps the indentation it found');
    assert.match(io.err(), /result-synthesized\s+messages\[1\] a:/);
  });

  test('an unchanged document is printed byte for byte', async () => {
    const text = '[ {"role":"user","content":"q"},\n  {"role":"assistant","content":"a"} ]\n';
    await writeFile(path('odd-format.json'), text);
    const io = captureIo();
    assert.equal(await run(['fix', path('odd-format.json')], io), 0);
    assert.equal(io.out(), text);
  });

  test('--json prints file, format, messages, changes, before and after', async () => {
    await writeFile(path('broken2.json'), JSON.stringify(broken));
    const io = captureIo();
    assert.equal(await run(['fix', '--json', path('broken2.json')], io), 0);
    const report = JSON.parse(io.out()) as Record<string, unknown>;
    assert.deepEqual(Object.keys(report), ['file', 'format', 'messages', 'changes', 'before', 'after']);
    assert.deepEqual(
      (report['changes'] as { kind: string; index: number }[]).map((c) => [c.kind, c.index]),
      [['result-synthesized', 1]],
    );
    assert.equal((report['before'] as unknown[]).length, 1);
    assert.deepEqual(report['after'], []);
  });

  test('--write replaces the file atomically and keeps FILE.bak; an unchanged file is not rewritten', async () => {
    const original = JSON.stringify(broken);
    await writeFile(path('w.json'), original);
    assert.equal(await run(['fix', '--write', path('w.json')], captureIo()), 0);
    assert.equal(await readFile(path('w.json.bak'), 'utf8'), original);
    assert.deepEqual(check(JSON.parse(await readFile(path('w.json'), 'utf8')) as Message[]), []);
    await writeFile(path('clean.json'), JSON.stringify(valid));
    const io = captureIo();
    assert.equal(await run(['fix', '--write', path('clean.json')], io), 0);
    await assert.rejects(readFile(path('clean.json.bak')), /ENOENT/);
    assert.match(io.err(), /valid, nothing to repair/);
  });

  test('--write on a Markdown session keeps it a session', async () => {
    await writeFile(path('s.md'), formatTranscript(broken));
    assert.equal(await run(['fix', '--write', path('s.md')], captureIo()), 0);
    const io = captureIo();
    assert.equal(await run(['check', path('s.md')], io), 0, io.out());
  });

  test('bad input writes nothing and exits 2', async () => {
    await writeFile(path('bad2.json'), '[{"role":');
    const io = captureIo();
    assert.equal(await run(['fix', '--write', path('bad2.json')], io), 2);
    assert.match(io.err(), /bad2\.json:1:10: not valid JSON/);
    await assert.rejects(readFile(path('bad2.json.bak')), /ENOENT/);
  });

  test('exit 1 when violations remain (a request that ends with the assistant)', async () => {
    await writeFile(path('ends.json'), JSON.stringify(valid));
    const io = captureIo();
    assert.equal(await run(['fix', '--profile', 'deepseek', '--request', path('ends.json')], io), 1);
    assert.match(io.err(), /REMAINING ends-with-assistant/);
  });
});

test('help text is generated from the command definitions (pinned)', () => {
  assert.equal(
    formatUsage(checkCommand),
    [
      'Usage: unstuck check [options] FILE...',
      '',
      'Name every violation in a history, the way the provider would. Exit 0 valid, 1 violations, 2 bad input.',
      '',
      'Options:',
      '  -p, --profile VALUE        Provider rules to apply: openai, deepseek, qwen, mistral, moonshot, groq, anthropic, local (default openai)',
      '      --json                 Machine-readable output',
      '      --request              Treat each file as a request about to be sent (adds rules about how a request ends)',
      '      --model VALUE          The model the history is sent to (some rules depend on it, e.g. deepseek-reasoner)',
      '      --thinking VALUE       Thinking mode on or off (default: what the profile assumes for the model)',
      "      --format VALUE         Read a JSON document's history as this wire format (openai-chat, anthropic-messages, gemini-contents, responses-input; default: recognised from its elements, else refused)",
      "      --agent VALUE          Read each FILE as this agent's session file (claude-code, cline, codex, gemini-cli, opencode, qwen-code; default: recognised from the content)",
      "      --session VALUE        For OpenCode's opencode.db: the session to check (also FILE#ID; default: every session)",
      '  -h, --help                 Show this help',
      '',
    ].join('\n'),
  );
  assert.match(formatUsage(fixCommand), /--write\s+Replace FILE atomically/);
});

test('an option parsing error is one line', async () => {
  const io = captureIo();
  assert.equal(await run(['check', '--profile', '-x', 'file.json'], io), 2);
  assert.equal(io.err().trim().split('\n').length, 1, io.err());
});
