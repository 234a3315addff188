import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Emulator } from '../../src/emulator/index.js';
import { createEmulator } from '../../src/emulator/index.js';
import { listenOn } from '../../src/emulator/listen.js';
import { cleanEnv, NODE_ARGS } from './harness/run-chat-binary.js';
import { hasTmux, openTmuxTerminal } from './harness/tmux-terminal.js';

/** `/compact` and Markdown answers in a real terminal (tmux), against the emulator. */
let cwd: string;
let main: Emulator;
let summarizer: Emulator;
let server: { url: string; close(): Promise<void> };

const ANSWER = '# Plan\n\n- read the config\n- fix the import\n\n```js\nconst answer = 42;\n```\n\nDone with the plan.';
const LONG = `Details: ${'the config sets module to NodeNext, so every relative import needs its .js extension. '.repeat(30)}`;

before(async () => {
  cwd = await mkdtemp(join(tmpdir(), 'unstuck-chat-compact-'));
  main = createEmulator({ profile: 'deepseek' });
  summarizer = createEmulator({ profile: 'deepseek' });
  // Requests without tools are the summarizer's.
  server = await listenOn(
    async (request) => {
      if (request.method !== 'POST') return main.handle(request);
      const text = await request.text();
      const tools = (JSON.parse(text) as { tools?: unknown }).tools;
      return (tools === undefined ? summarizer : main).handle(
        new Request(request.url, { method: 'POST', headers: request.headers, body: text }),
      );
    },
    { port: 0, host: '127.0.0.1' },
  );
});

after(async () => {
  await server.close();
  await rm(cwd, { recursive: true, force: true });
});

const command = (args: string[]): string =>
  [process.execPath, ...NODE_ARGS, 'chat', ...args].map((part) => `'${part}'`).join(' ');

describe('unstuck chat: /compact and Markdown answers (tmux)', {
  skip: hasTmux() ? false : 'tmux is not installed (apt-get install tmux)',
}, () => {
  it('draws the answer as Markdown, compacts on /compact with a line saying what it saved, and has nothing left to compact after', async () => {
    main.push(
      { text: `${LONG}\n\n${ANSWER}`, stream: { chunkSize: 40, delayMs: 1 } },
      { text: 'A plain second answer.' },
    );
    summarizer.push({ text: 'The person asked for a plan; it was given.' });
    const terminal = await openTmuxTerminal({
      command: command(['--base-url', `${server.url}/v1`, '--profile', 'deepseek']),
      cwd,
      env: cleanEnv({ OPENAI_API_KEY: 'sk-test', TERM: 'xterm-256color' }),
    });
    try {
      await terminal.waitFor(/^> ?$/m);
      await terminal.type('make a plan');
      const drawn = await terminal.waitFor(/Done with the plan\.\n> ?$/);
      assert.match(drawn, /\* read the config\n\s*\* fix the import/, 'the list is drawn as a list');
      assert.match(drawn, /const answer = 42;/);
      assert.ok(!drawn.includes('```'), 'no fence markers on the screen');
      assert.ok(!drawn.includes('- read the config'));
      assert.match(await terminal.screen({ escapes: true }), /\x1b\[[0-9;]*m[^\n]*Plan/, 'the heading is styled');

      await terminal.type('and then?');
      const before = (await terminal.waitFor(/A plain second answer\.\n> ?$/)).length;
      await terminal.type('/compact');
      const compacted = await terminal.waitFor(
        /compacted 2 messages into a summary: about [\d,]+ -> [\d,]+ tokens, [\d,]+ saved \(the session file keeps every message\)\n> ?$/,
        { after: before },
      );
      assert.match(compacted.slice(before), /compacting: summarizing 2 older messages/);
      assert.equal(summarizer.requests.length, 1);
      assert.match(summarizer.requests[0]?.body.messages[1].content, /make a plan/);

      const again = (await terminal.screen()).length;
      await terminal.type('/compact');
      await terminal.waitFor(
        /compaction failed: nothing to compact yet: there is no whole turn before the newest one\n> ?$/,
        { after: again },
      );
      assert.equal(summarizer.requests.length, 1);
      for (const request of [...main.requests, ...summarizer.requests])
        assert.deepEqual([request.status, request.violations], [200, []]);
    } finally {
      await terminal.close();
    }
  });

  it('with NO_COLOR the answer is printed as it came', async () => {
    main.push({ text: ANSWER });
    const terminal = await openTmuxTerminal({
      command: command(['--base-url', `${server.url}/v1`, '--profile', 'deepseek']),
      cwd,
      env: cleanEnv({ OPENAI_API_KEY: 'sk-test', TERM: 'xterm-256color', NO_COLOR: '1' }),
    });
    try {
      await terminal.waitFor(/^> ?$/m);
      await terminal.type('make a plan');
      const shown = await terminal.waitFor(/Done with the plan\.\n> ?$/);
      assert.match(shown, /# Plan\n\n- read the config\n- fix the import\n\n```js\nconst answer = 42;\n```/);
    } finally {
      await terminal.close();
    }
  });
});
