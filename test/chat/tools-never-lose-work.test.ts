import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { AgentEvent, Tool } from '../../src/agent/index.js';
import { createAgent } from '../../src/agent/index.js';
import { createBuiltinTools } from '../../src/chat/tools/builtin-tools.js';
import { allowAll } from '../../src/chat/tools/confirm.js';
import type { Step } from '../../src/emulator/index.js';
import { createEmulator } from '../../src/emulator/index.js';
import { cleanEnv, MAIN, NODE_ARGS, TSX } from './harness/run-chat-binary.js';

/**
 * The ways parallel tools could lose work (a write and an edit of one file in one block, reads that
 * should overlap, a file changed behind the model's back, many calls in one block), each run
 * twice: through the library (createAgent with the built-in tools, the emulator in-process) and
 * through the real binary (`unstuck chat -p --yes --json` against the emulator on 127.0.0.1).
 */
const RUNS = 100;
const OPEN_BARRIER = fileURLToPath(new URL('./fixtures/open-barrier.ts', import.meta.url));
const MODIFIED =
  /has been modified since it was last read, either by the user, by a command or by another program\. Read it again with read_file before attempting to write it\./;

let base: string;
before(async () => {
  base = await mkdtemp(join(tmpdir(), 'unstuck-never-lose-'));
});
after(async () => {
  await rm(base, { recursive: true, force: true });
});

interface Report {
  status: string;
  toolCalls: { name: string; result: string; isError: boolean }[];
}

/** One `unstuck chat -p --yes --json` against an emulator playing `script`, in `cwd`. */
async function chatBinary(
  cwd: string,
  script: Step[],
  options: { nodeArgs?: string[]; env?: Record<string, string> } = {},
): Promise<{ report: Report; stderr: string }> {
  const emulator = createEmulator({ profile: 'deepseek', script });
  const server = await emulator.listen();
  try {
    const args = [
      ...(options.nodeArgs === undefined ? NODE_ARGS : ['--import', TSX, ...options.nodeArgs, MAIN]),
      'chat',
      '--base-url',
      server.url,
      '--profile',
      'deepseek',
      '--yes',
      '--json',
      '-p',
      'go',
    ];
    const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>(
      (resolve, reject) => {
        const child = spawn(process.execPath, args, {
          cwd,
          env: cleanEnv({ OPENAI_API_KEY: 'sk-test', ...options.env }),
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        let err = '';
        child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
        child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
        child.on('error', reject);
        child.on('close', (exit) => resolve({ code: exit, stdout: out, stderr: err }));
      },
    );
    assert.equal(code, 0, stderr);
    return { report: JSON.parse(stdout) as Report, stderr };
  } finally {
    await server.close();
  }
}

/** One turn of an agent with the chat's built-in tools (allowed, as with --yes) in `root`. */
function libraryAgent(root: string, script: Step[], wrap: (tool: Tool) => Tool = (tool) => tool) {
  const emulator = createEmulator({ profile: 'deepseek', script });
  const agent = createAgent({
    baseURL: 'http://emulator.test/v1',
    apiKey: 'sk-test',
    model: 'deepseek-chat',
    profile: 'deepseek',
    fetch: emulator.fetch,
    tools: createBuiltinTools({ root, confirm: allowAll, env: { PATH: process.env.PATH } }).map(wrap),
  });
  return {
    emulator,
    async turn(text = 'go'): Promise<{ name: string; result: string; isError: boolean }[]> {
      const ends: { name: string; result: string; isError: boolean }[] = [];
      for await (const event of agent.runTurn(text)) {
        if (event.type === 'tool-call-end')
          ends.push({ name: event.name, result: event.result, isError: event.isError });
        if (event.type === 'turn-end') assert.equal(event.reason, 'stop', JSON.stringify(event));
        if (event.type === 'error') assert.fail((event as Extract<AgentEvent, { type: 'error' }>).message);
      }
      return ends;
    },
  };
}

/** The file: 44 KB of numbered lines ending in a line both versions share. */
function notes(prefix: string, lines: number): string {
  return `${Array.from({ length: lines }, (_, index) => `${prefix} line ${index + 1} ${'.'.repeat(10)}`).join('\n')}\nLAST LINE\n`;
}
const OLD = notes('old', 2000);
const NEW = notes('new', 1000);
const SEQUENTIAL = NEW.replace('LAST LINE', 'EDITED LAST LINE');

/** Read the file, then one block: write_file (new content), edit_file (its last line). */
function writeThenEditScript(file: string): Step[] {
  return [
    { toolCalls: [{ name: 'read_file', arguments: JSON.stringify({ path: file }) }] },
    {
      toolCalls: [
        { name: 'write_file', arguments: JSON.stringify({ path: file, content: NEW }) },
        {
          name: 'edit_file',
          arguments: JSON.stringify({ path: file, old_text: 'LAST LINE', new_text: 'EDITED LAST LINE' }),
        },
      ],
    },
    { text: 'done' },
  ];
}

describe('write_file then edit_file of one file in one block gives the sequential result', () => {
  it(`through the library, ${RUNS} runs of ${RUNS}`, async () => {
    const root = await mkdtemp(join(base, 'lib-write-edit-'));
    const outcomes = new Map<string, number>();
    for (let run = 0; run < RUNS; run += 1) {
      const file = `notes-${run}.txt`;
      await writeFile(join(root, file), OLD);
      const results = await libraryAgent(root, writeThenEditScript(file)).turn();
      const content = await readFile(join(root, file), 'utf8');
      const verdict =
        content === SEQUENTIAL && results.every((result) => !result.isError)
          ? 'sequential'
          : content === OLD.replace('LAST LINE', 'EDITED LAST LINE')
            ? 'write lost'
            : content === NEW
              ? 'edit lost'
              : `other: ${JSON.stringify(results.map((result) => result.result.slice(0, 80)))}`;
      outcomes.set(verdict, (outcomes.get(verdict) ?? 0) + 1);
    }
    assert.deepEqual(Object.fromEntries(outcomes), { sequential: RUNS });
  });

  it(`through unstuck chat -p --yes, ${RUNS} runs of ${RUNS} (one block of ${RUNS} write/edit pairs, each on its own file)`, async () => {
    const cwd = await mkdtemp(join(base, 'bin-write-edit-'));
    const files = Array.from({ length: RUNS }, (_, run) => `notes-${run}.txt`);
    for (const file of files) await writeFile(join(cwd, file), OLD);
    const script: Step[] = [
      { toolCalls: files.map((file) => ({ name: 'read_file', arguments: JSON.stringify({ path: file }) })) },
      { toolCalls: files.flatMap((file) => writeThenEditScript(file)[1]!.toolCalls!) },
      { text: 'done' },
    ];
    const { report, stderr } = await chatBinary(cwd, script);
    assert.equal(report.status, 'stop');
    assert.deepEqual(
      report.toolCalls.filter((call) => call.isError),
      [],
    );
    let sequential = 0;
    for (const file of files) if ((await readFile(join(cwd, file), 'utf8')) === SEQUENTIAL) sequential += 1;
    assert.equal(sequential, RUNS);
    // 300 calls, 200 in one block: no listener warning leaks into the chat.
    assert.doesNotMatch(stderr, /MaxListenersExceededWarning/);
  });
});

describe('a block of three reads runs concurrently (measured overlap)', () => {
  async function threeFiles(prefix: string): Promise<string> {
    const root = await mkdtemp(join(base, prefix));
    for (const name of ['read-a.txt', 'read-b.txt', 'read-c.txt']) await writeFile(join(root, name), `${name}\n`);
    return root;
  }
  const threeReads: Step[] = [
    {
      toolCalls: ['read-a.txt', 'read-b.txt', 'read-c.txt'].map((path) => ({
        name: 'read_file',
        arguments: JSON.stringify({ path }),
      })),
    },
    { text: 'read' },
  ];

  it('through the library: all three read_file calls are running at the same moment', async () => {
    const root = await threeFiles('lib-reads-');
    let active = 0;
    let most = 0;
    const counting = (tool: Tool): Tool => ({
      ...tool,
      run: async (args, context) => {
        active += 1;
        most = Math.max(most, active);
        try {
          return await tool.run(args, context);
        } finally {
          active -= 1;
        }
      },
    });
    const results = await libraryAgent(root, threeReads, counting).turn();
    assert.deepEqual(
      results.map((result) => result.result),
      ['read-a.txt\n', 'read-b.txt\n', 'read-c.txt\n'],
    );
    assert.equal(most, 3);
  });

  it('through unstuck chat -p --yes: the three files are open at once inside the binary', async () => {
    const cwd = await threeFiles('bin-reads-');
    const log = join(cwd, '..', `open-log-${Date.now()}.jsonl`);
    const env = {
      OPEN_BARRIER_PATTERN: '/read-[abc]\\.txt$',
      OPEN_BARRIER_COUNT: '3',
      OPEN_BARRIER_GIVE_UP_MS: '3000',
      OPEN_BARRIER_LOG: log,
    };
    const { report } = await chatBinary(cwd, threeReads, { nodeArgs: ['--import', OPEN_BARRIER], env });
    assert.deepEqual(
      report.toolCalls.map((call) => call.result),
      ['read-a.txt\n', 'read-b.txt\n', 'read-c.txt\n'],
    );
    const opens = (await readFile(log, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { most: number });
    assert.equal(opens.length, 3);
    assert.equal(Math.max(...opens.map((open) => open.most)), 3);
  });
});

describe("an edit of a file changed behind the model's back is refused and the file is untouched", () => {
  it('through the library: the user changes the file between turns; the model is told to read it again, and then can', async () => {
    const root = await mkdtemp(join(base, 'lib-behind-'));
    const file = join(root, 'notes.txt');
    await writeFile(file, OLD);
    const agent = libraryAgent(root, [
      { toolCalls: [{ name: 'read_file', arguments: '{"path":"notes.txt"}' }] },
      { text: 'read it' },
      {
        toolCalls: [
          {
            name: 'edit_file',
            arguments: JSON.stringify({ path: 'notes.txt', old_text: 'LAST LINE', new_text: 'MODEL' }),
          },
        ],
      },
      { toolCalls: [{ name: 'read_file', arguments: '{"path":"notes.txt","offset":1,"limit":1}' }] },
      {
        toolCalls: [
          {
            name: 'edit_file',
            arguments: JSON.stringify({ path: 'notes.txt', old_text: 'LAST LINE', new_text: 'MODEL' }),
          },
        ],
      },
      { text: 'edited' },
    ]);
    await agent.turn('read the notes');
    const byTheUser = OLD.replace('old line 7 ', 'the user was here ');
    await writeFile(file, byTheUser);
    const results = await agent.turn('edit the last line');
    assert.equal(results[0]?.isError, true);
    assert.match(results[0]?.result ?? '', /^Error: notes\.txt has been modified since it was last read/);
    assert.match(results[0]?.result ?? '', MODIFIED);
    assert.equal(results[2]?.result, 'edited notes.txt at line 2001');
    assert.equal(await readFile(file, 'utf8'), byTheUser.replace('LAST LINE', 'MODEL'));
  });

  it("through unstuck chat -p --yes: a run_command changes the file, the edit is refused, the file keeps the command's change", async () => {
    const cwd = await mkdtemp(join(base, 'bin-behind-'));
    await writeFile(join(cwd, 'notes.txt'), OLD);
    const { report } = await chatBinary(cwd, [
      { toolCalls: [{ name: 'read_file', arguments: '{"path":"notes.txt"}' }] },
      { toolCalls: [{ name: 'run_command', arguments: '{"command":"echo appended by a formatter >> notes.txt"}' }] },
      {
        toolCalls: [
          {
            name: 'edit_file',
            arguments: JSON.stringify({ path: 'notes.txt', old_text: 'LAST LINE', new_text: 'MODEL' }),
          },
        ],
      },
      { text: 'refused' },
    ]);
    const edit = report.toolCalls[2];
    assert.equal(edit?.isError, true);
    assert.match(edit?.result ?? '', MODIFIED);
    assert.equal(await readFile(join(cwd, 'notes.txt'), 'utf8'), `${OLD}appended by a formatter\n`);
  });
});

describe('50 tool calls in one block print no MaxListenersExceededWarning into the chat', () => {
  it('through unstuck chat -p --yes', async () => {
    const cwd = await mkdtemp(join(base, 'bin-fifty-'));
    await mkdir(join(cwd, 'src'));
    await writeFile(join(cwd, 'src', 'a.txt'), 'a\n');
    const calls = Array.from({ length: 50 }, (_, index) =>
      index % 2 === 0
        ? { name: 'read_file', arguments: '{"path":"src/a.txt"}' }
        : { name: 'list_directory', arguments: '{"path":"src"}' },
    );
    const { report, stderr } = await chatBinary(cwd, [{ toolCalls: calls }, { text: 'done' }]);
    assert.equal(report.toolCalls.length, 50);
    assert.deepEqual(
      report.toolCalls.filter((call) => call.isError),
      [],
    );
    assert.doesNotMatch(stderr, /MaxListenersExceededWarning|Warning:/);
  });
});
