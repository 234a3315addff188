import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import type { Io } from '../../src/cli/io.js';
import { run } from '../../src/cli/run.js';

function captureIo(cwd: string, signal?: AbortSignal): Io & { out: () => string; err: () => string } {
  let out = '';
  let err = '';
  const io: Io & { out: () => string; err: () => string } = {
    stdout: { write: (text: string) => (out += text) },
    stderr: { write: (text: string) => (err += text) },
    stdin: new PassThrough(),
    env: {},
    cwd,
    out: () => out,
    err: () => err,
  };
  if (signal !== undefined) io.signal = signal;
  return io;
}

async function waitFor(predicate: () => boolean): Promise<void> {
  for (let tries = 0; tries < 200 && !predicate(); tries += 1) await new Promise((resolve) => setTimeout(resolve, 10));
}

test('unstuck emulate serves a script on loopback until its signal stops it', async () => {
  const directory = await mkdtemp(join(tmpdir(), 'unstuck-emulate-'));
  try {
    await writeFile(join(directory, 'script.json'), JSON.stringify([{ text: 'from the script' }]));
    const controller = new AbortController();
    const io = captureIo(directory, controller.signal);
    const exit = run(['emulate', '--profile', 'deepseek', '--script', 'script.json'], io);
    await waitFor(() => /http:\/\/127\.0\.0\.1:\d+/.test(io.out()));
    const url = /http:\/\/127\.0\.0\.1:\d+/.exec(io.out())?.[0];
    assert.ok(url !== undefined, `printed its URL: ${io.out()}`);
    const answer = (await (
      await fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }),
      })
    ).json()) as any;
    assert.equal(answer.choices[0].message.content, 'from the script');
    const rejected = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ messages: [{ role: 'tool', tool_call_id: 'x', content: 'secret' }] }),
    });
    assert.equal(rejected.status, 400);
    controller.abort();
    assert.equal(await exit, 0);
    assert.match(io.err(), /\/v1\/chat\/completions 200\n/);
    assert.match(io.err(), /\/v1\/chat\/completions 400 tool-result-orphan/);
    assert.doesNotMatch(io.err(), /secret/, 'message contents are never logged');
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
});

test('unstuck emulate serves the Anthropic wire beside chat, and logs rule and message index, never contents', async () => {
  const directory = await mkdtemp(join(tmpdir(), 'unstuck-emulate-'));
  try {
    await writeFile(
      join(directory, 'script.json'),
      JSON.stringify([{ toolCalls: [{ name: 'Read', arguments: '{"file_path":"/a"}' }] }]),
    );
    const controller = new AbortController();
    const io = captureIo(directory, controller.signal);
    const exit = run(['emulate', '--script', 'script.json'], io);
    await waitFor(() => /http:\/\/127\.0\.0\.1:\d+/.test(io.out()));
    const url = /http:\/\/127\.0\.0\.1:\d+/.exec(io.out())?.[0];
    assert.ok(url !== undefined);
    assert.match(io.out(), /POST \/v1\/messages/);
    const headers = {
      'content-type': 'application/json',
      'x-api-key': 'sk-ant-secret-key',
      'anthropic-version': '2023-06-01',
    };
    const answer = (await (
      await fetch(`${url}/v1/messages?beta=true`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          model: 'claude-sonnet-4-5',
          max_tokens: 64,
          messages: [{ role: 'user', content: 'hi' }],
        }),
      })
    ).json()) as any;
    assert.equal(answer.content[0].type, 'tool_use');
    const poisoned = [
      { role: 'user', content: 'read' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: ' ' },
          { type: 'tool_use', id: 'toolu_1', name: 'Read', input: {} },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'private words' }] },
    ];
    const rejected = await fetch(`${url}/v1/messages`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 64, messages: poisoned }),
    });
    assert.equal(rejected.status, 400);
    assert.equal(((await rejected.json()) as any).error.type, 'invalid_request_error');
    controller.abort();
    assert.equal(await exit, 0);
    assert.match(io.err(), /^\/v1\/messages 200\n\/v1\/messages 400 text-block-empty messages\.1\n$/);
    assert.doesNotMatch(io.err(), /private words|sk-ant-secret-key/);
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
});

test('unstuck emulate: bad input is one line on stderr and exit 2', async () => {
  const directory = await mkdtemp(join(tmpdir(), 'unstuck-emulate-'));
  try {
    await writeFile(join(directory, 'bad.json'), JSON.stringify([{ fault: { status: 404 } }]));
    await writeFile(join(directory, 'broken.json'), '[{');
    const cases: [string[], RegExp][] = [
      [['emulate', '--profile', 'nope'], /^unstuck emulate: unknown profile 'nope'/],
      [['emulate', '--port', 'eighty'], /^unstuck emulate: --port must be a number/],
      [['emulate', '--script', 'missing.json'], /^unstuck emulate: missing\.json: cannot read the script: ENOENT/],
      [['emulate', '--script', 'bad.json'], /^unstuck emulate: bad\.json: step 0\.fault: expected/],
      [['emulate', '--script', 'broken.json'], /^unstuck emulate: broken\.json: the script is not JSON/],
    ];
    for (const [argv, pattern] of cases) {
      const io = captureIo(directory, AbortSignal.abort());
      assert.equal(await run(argv, io), 2, argv.join(' '));
      assert.match(io.err(), pattern);
      assert.equal(io.err().trim().split('\n').length, 1);
    }
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
});

test('unstuck emulate serves Responses and Gemini too, and logs the rule at input.N / contents.N, never contents or keys', async () => {
  const directory = await mkdtemp(join(tmpdir(), 'unstuck-emulate-'));
  try {
    const controller = new AbortController();
    const io = captureIo(directory, controller.signal);
    const exit = run(['emulate'], io);
    await waitFor(() => /http:\/\/127\.0\.0\.1:\d+/.test(io.out()));
    const url = /http:\/\/127\.0\.0\.1:\d+/.exec(io.out())?.[0];
    assert.ok(url !== undefined);
    assert.match(io.out(), /Responses: POST \/v1\/responses/);
    assert.match(io.out(), /Gemini: POST \/v1beta\/models\/\{model\}:generateContent/);
    const responses = (input: unknown) =>
      fetch(`${url}/v1/responses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer sk-secret-key' },
        body: JSON.stringify({ model: 'gpt-5', input }),
      });
    assert.equal((await responses('hi')).status, 200);
    const orphan = [
      { role: 'user', content: 'private words' },
      { type: 'function_call_output', call_id: 'call_1', output: 'private output' },
    ];
    assert.equal((await responses(orphan)).status, 400);
    const gemini = (contents: unknown) =>
      fetch(`${url}/v1beta/models/gemini-2.5-pro:generateContent?key=secret-google-key`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ contents }),
      });
    assert.equal((await gemini([{ role: 'user', parts: [{ text: 'hi' }] }])).status, 200);
    const empty = await gemini([
      { role: 'user', parts: [{ text: 'private words' }] },
      { role: 'model', parts: [{ text: '' }] },
    ]);
    assert.equal(empty.status, 400);
    assert.equal(((await empty.json()) as any).error.status, 'INVALID_ARGUMENT');
    controller.abort();
    assert.equal(await exit, 0);
    assert.equal(
      io.err(),
      [
        '/v1/responses 200',
        '/v1/responses 400 tool-result-orphan input.1',
        '/v1beta/models/gemini-2.5-pro:generateContent 200',
        '/v1beta/models/gemini-2.5-pro:generateContent 400 text-block-empty contents.1',
        '',
      ].join('\n'),
    );
    assert.doesNotMatch(io.err(), /private|secret/);
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
});
