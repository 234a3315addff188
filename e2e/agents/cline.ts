import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AgentProcess } from './agent-process.js';
import { expectations, runAgent, startLoggedEmulator } from './agent-process.js';
import type { AgentRunOptions } from './resume-poisoned.js';
import { unstuckMain } from './unstuck-proxy.js';

/**
 * The real Cline CLI (npm `cline` 2.18.0: the extension's core without VS Code, a Node program) against the
 * emulator's OpenAI chat wire, offline (run.ts puts it in a network namespace of its own). HOME and CLINE_DIR a
 * temporary directory; `cline auth -p openai -b <emulator>/v1` with a dummy key; `cline task -y --json` runs a task
 * with every action approved, and writes `$CLINE_DIR/data/tasks/<id>/api_conversation_history.json` — the file the
 * VS Code extension writes, resumed with `cline -T <id>`. Cline ends a task with its `attempt_completion` tool, so
 * the emulator answers with that call, not with bare text.
 *
 * Steps: a task (read_file, then attempt_completion); the file as written, resumed (control); a poisoning Cline
 * does not mend (the tool's result written twice, as Cline's own ToolResultUtils warns it can be), resumed straight
 * at the strict emulator (the 400); then `unstuck fix --write` on the file and the resume straight at the emulator
 * again, which must complete, every message the fix did not touch byte for byte.
 */

export const CLINE_VERSION = '2.18.0';
const here = fileURLToPath(new URL('.', import.meta.url));
const cline = join(here, 'node_modules', 'cline', 'dist', 'cli.mjs');
const fixtures = fileURLToPath(new URL('../../test/fixtures/agents/cline/', import.meta.url));
const RESUMED = 'Resumed.';

export async function runCline(options: AgentRunOptions): Promise<string[]> {
  const { log } = options;
  const { failures, expect } = expectations('cline', log);
  if (!existsSync(cline)) {
    expect(false, `${cline} is there (npm ci in e2e/agents)`);
    return failures;
  }
  const root = await mkdtemp(join(tmpdir(), 'unstuck-e2e-cline-'));
  const home = join(root, 'home');
  const work = join(root, 'work');
  await mkdir(home);
  await mkdir(work);
  await writeFile(join(work, 'notes.txt'), 'The secret word is lighthouse.\n');
  const { emulator, server, seen } = await startLoggedEmulator({ wires: ['chat'], profile: 'openai' }, 'messages', log);
  const env: NodeJS.ProcessEnv = {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    HOME: home,
    CLINE_DIR: join(home, '.cline'),
    LANG: 'C.UTF-8',
    NO_COLOR: '1',
  };
  const run = (args: string[]): Promise<AgentProcess> =>
    runAgent(process.execPath, [cline, ...args], { cwd: work, env, timeoutMs: 120_000 });
  /** The run's last completion (a resume prints the task's earlier messages first), or its last error. */
  const events = (result: AgentProcess) =>
    result.stdout.split('\n').flatMap((line) => {
      try {
        return [JSON.parse(line) as { type?: string; say?: string; text?: string; message?: string; ts?: number }];
      } catch {
        return [];
      }
    });
  const completion = (result: AgentProcess, since = 0): string | undefined =>
    events(result).findLast(
      (event) => event.type === 'say' && event.say === 'completion_result' && (event.ts ?? 0) >= since,
    )?.text;
  const said = (result: AgentProcess): string =>
    (
      events(result).findLast((event) => event.type === 'error')?.message ??
      result.stderr.trim().split('\n').at(-1) ??
      ''
    ).slice(0, 300);
  const complete = (result: string) => ({
    toolCalls: [{ name: 'attempt_completion', arguments: JSON.stringify({ result }) }],
  });
  let pending = false;
  /** Resumes the task straight at the emulator: its requests, exit code and completion text. */
  const resume = async (id: string) => {
    const before = seen.length;
    if (!pending) emulator.push(complete(RESUMED));
    const started = Date.now();
    let resumed = await run(['-y', '--json', '-T', id, 'Say it again.']);
    if (resumed.code === null && seen.length === before) {
      // Seen in 2 of 4 runs on a loaded machine: `cline -T` killed at the timeout before it made any request (its own
      // start-up, not the history: nothing reached the emulator). Said, and tried once more.
      log(
        `   note: cline -T was killed after ${Math.round(resumed.seconds)} s having made no request (${said(resumed) || 'no output'}); once more`,
      );
      resumed = await run(['-y', '--json', '-T', id, 'Say it again.']);
    }
    const requests = seen.slice(before);
    // A rejected request does not use up its step: the answer left is the next resume's (the same completion).
    pending = !requests.some((request) => request.status === 200);
    return { resumed, requests, text: completion(resumed, started) };
  };
  try {
    log(`cline ${(await run(['--version'])).stdout.trim()}`);
    const auth = await run(['auth', '-p', 'openai', '-k', 'sk-e2e-dummy', '-m', 'gpt-4o', '-b', `${server.url}/v1`]);
    expect(auth.code === 0, 'cline auth -p openai -b <emulator>/v1 configures the emulator');

    log('cline 1. a task: read_file notes.txt, then attempt_completion');
    emulator.push(
      { toolCalls: [{ name: 'read_file', arguments: JSON.stringify({ path: join(work, 'notes.txt') }) }] },
      complete('The file says the secret word is lighthouse.'),
    );
    const first = await run(['task', '-y', '--json', 'What does notes.txt say?']);
    log(`   exit ${first.code}; completion ${JSON.stringify(completion(first))}`);
    expect(first.code === 0, 'cline task exits 0');
    expect(completion(first) === 'The file says the secret word is lighthouse.', 'the task ends with the completion');
    expect(
      seen.some((request) => request.status === 200 && hasToolMessage(request.body, 'lighthouse')),
      "Cline ran read_file and sent the file's contents back",
    );
    const tasks = join(home, '.cline', 'data', 'tasks');
    const id = existsSync(tasks) ? (await readdir(tasks))[0] : undefined;
    const file = id === undefined ? undefined : join(tasks, id, 'api_conversation_history.json');
    expect(
      file !== undefined && existsSync(file),
      'Cline wrote $CLINE_DIR/data/tasks/<id>/api_conversation_history.json',
    );
    if (file === undefined || id === undefined || !existsSync(file)) return failures;
    const original = await readFile(file, 'utf8');
    // Cline keeps more than the history in the task folder (ui_messages.json: a failed request is resumed as that
    // failure, re-thrown, no request made): each resume below starts from the folder as the task left it.
    const folder = join(tasks, id);
    const snapshot = new Map<string, string>();
    for (const name of await readdir(folder)) snapshot.set(name, await readFile(join(folder, name), 'utf8'));
    const restore = async (history: string) => {
      for (const name of await readdir(folder)) if (!snapshot.has(name)) await rm(join(folder, name), { force: true });
      for (const [name, text] of snapshot) await writeFile(join(folder, name), text);
      await writeFile(file, history);
    };
    const messages = JSON.parse(original) as { role: string; content: unknown }[];
    log(`   ${messages.length} messages, ${original.length} bytes: ${shapeOf(messages)}`);
    const checked = spawnSync(process.execPath, [unstuckMain, 'check', file], { encoding: 'utf8' });
    log(`   unstuck check on it: exit ${checked.status}`);
    for (const line of checked.stdout.trim().split('\n')) log(`      ${line}`);
    // Cline sends "result missing" for each call without a tool_result (its ensureToolResultsFollowToolUse), the
    // last one's in the resume's own message: checked as sent, the file is valid, and fix has nothing to write.
    expect(checked.status === 0, 'unstuck check: the task as written is valid as Cline sends it');
    const untouched = spawnSync(process.execPath, [unstuckMain, 'fix', '--write', file], { encoding: 'utf8' });
    expect(
      untouched.status === 0 && (await readFile(file, 'utf8')) === original && !existsSync(`${file}.bak`),
      'unstuck fix --write on it writes nothing',
    );

    log('cline 2. the task as written, resumed with `cline -T <id>` straight at the strict emulator (control)');
    const control = await resume(id);
    log(
      `   exit ${control.resumed.code}; the emulator saw ${control.requests.map((request) => request.status).join(', ')}; completion ${JSON.stringify(control.text)}`,
    );
    log(`   what Cline sent for the call: ${toolMessages(control.requests[0]?.body).join('; ')}`);
    expect(control.resumed.code === 0 && control.text === RESUMED, 'the task as written resumes');

    log(
      "cline 3. poisoned: the call's result written twice (two tool_result blocks for one tool_use), resumed straight",
    );
    const poisoned = poisonResultTwice(original);
    await writeFile(file, poisoned.text);
    const rejected = await resume(id);
    const rules = rejected.requests.flatMap((request) => request.violations.map((violation) => violation.rule));
    log(
      `   exit ${rejected.resumed.code}; the emulator saw ${rejected.requests.map((request) => request.status).join(', ')} (${[...new Set(rules)].join(', ') || 'no rule'}); completion ${JSON.stringify(rejected.text)}`,
    );
    expect(
      rejected.requests.some((request) => request.status === 400) && rejected.text !== RESUMED,
      'Cline sends both results as they are: the 400, and the resume fails',
    );

    log(
      'cline 4. the poisoned file mended by `unstuck fix --write`, resumed straight at the strict emulator (no proxy)',
    );
    await restore(poisoned.text);
    const fixed = spawnSync(process.execPath, [unstuckMain, 'fix', '--write', file], { encoding: 'utf8' });
    for (const line of fixed.stderr.trim().split('\n')) log(`      ${line}`);
    expect(fixed.status === 0, 'unstuck fix --write repairs the task file');
    const mended = JSON.parse(await readFile(file, 'utf8')) as unknown[];
    const before = JSON.parse(poisoned.text) as unknown[];
    const changed = before.flatMap((element, index) =>
      JSON.stringify(element) === JSON.stringify(mended[index]) ? [] : [index],
    );
    log(
      `   ${changed.length} of ${before.length} messages changed (${changed.join(', ')}); the file is ${mended.length} messages`,
    );
    expect(
      changed.every((index) => index >= poisoned.index) && changed.includes(poisoned.index),
      'the messages before the poisoned one are the same JSON, byte for byte',
    );
    const after = await resume(id);
    log(
      `   resumed: exit ${after.resumed.code}; the emulator saw ${after.requests.map((request) => request.status).join(', ')}; completion ${JSON.stringify(after.text ?? said(after.resumed))}`,
    );
    expect(
      after.resumed.code === 0 && after.text === RESUMED,
      'after unstuck fix --write, the resume straight at the strict emulator completes',
    );
    expect(
      after.requests.length > 0 && after.requests.every((request) => request.status === 200),
      'after the fix the emulator saw only valid requests',
    );
    await restore(original);

    if (options.saveFixtures) {
      const directory = join(fixtures, `cline-cli-${CLINE_VERSION}`, 'tasks', id);
      await mkdir(directory, { recursive: true });
      await writeFile(join(directory, 'api_conversation_history.json'), original);
      const poisonedDirectory = join(fixtures, `cline-cli-${CLINE_VERSION}.result-twice`, 'tasks', id);
      await mkdir(poisonedDirectory, { recursive: true });
      await writeFile(join(poisonedDirectory, 'api_conversation_history.json'), poisoned.text);
      await writeFile(
        join(fixtures, `cline-cli-${CLINE_VERSION}.meta.json`),
        `${JSON.stringify(
          {
            agent: 'cline',
            version: CLINE_VERSION,
            recorded: new Date().toISOString(),
            by: 'npm run e2e:agents -- --agent cline --save-fixtures (e2e/agents/cline.ts)',
            setup:
              'HOME and CLINE_DIR a temporary directory; cline auth -p openai -k <dummy> -m gpt-4o -b http://127.0.0.1:PORT/v1; inside unshare -n (loopback only)',
            commands: {
              task: 'cline task -y --json "What does notes.txt say?"',
              resume: 'cline -y --json -T <task id> "Say it again."',
            },
            files: {
              [`cline-cli-${CLINE_VERSION}/tasks/${id}/api_conversation_history.json`]: 'as Cline wrote it',
              [`cline-cli-${CLINE_VERSION}.result-twice/tasks/${id}/api_conversation_history.json`]:
                'poisoned: two tool_result blocks for the one tool_use, at the start of the message after it (every other message the same)',
            },
            resumed: {
              asWritten: control.resumed.code === 0 ? 'completes' : `exit ${control.resumed.code}`,
              resultTwice: `400 ${[...new Set(rules)].join(', ')}, exit ${rejected.resumed.code}`,
            },
          },
          null,
          2,
        )}\n`,
      );
      log(`   saved the task file and its poisoning under test/fixtures/agents/cline/cline-cli-${CLINE_VERSION}*`);
    }
  } finally {
    await server.close();
    if (process.env['UNSTUCK_E2E_KEEP'] === '1') log(`kept ${root}`);
    else await rm(root, { recursive: true, force: true });
  }
  return failures;
}

/**
 * The message after the (first) tool_use gets two `tool_result` blocks for it at its start, the result's text as
 * their content; every other message is the same JSON. Cline writes compact JSON (one line), and so does this.
 */
function poisonResultTwice(text: string): { text: string; index: number } {
  const messages = JSON.parse(text) as { role: string; content: any }[];
  const call = messages.findIndex(
    (message) => Array.isArray(message.content) && message.content.some((block: any) => block?.type === 'tool_use'),
  );
  const next = messages[call + 1];
  if (call < 0 || next === undefined || !Array.isArray(next.content))
    throw new Error('cline: the task has no tool_use followed by a message');
  const use = (messages[call] as { content: any[] }).content.find((block) => block?.type === 'tool_use');
  const resultText = next.content.find((block: any) => block?.type === 'text')?.text ?? '';
  const result = { type: 'tool_result', tool_use_id: use.id, call_id: use.call_id, content: resultText };
  next.content = [result, { ...result }, ...next.content];
  return { text: JSON.stringify(messages), index: call + 1 };
}

function hasToolMessage(body: any, text: string): boolean {
  return (
    Array.isArray(body?.messages) &&
    body.messages.some((message: any) => JSON.stringify(message).includes(text) && message.role !== 'system')
  );
}

function toolMessages(body: any): string[] {
  return Array.isArray(body?.messages)
    ? body.messages
        .filter((message: any) => message?.role === 'tool')
        .map((message: any) => `tool ${message.tool_call_id}: ${JSON.stringify(String(message.content).slice(0, 60))}`)
    : [];
}

function shapeOf(messages: { role: string; content: unknown }[]): string {
  return messages
    .map(
      (message) =>
        `${message.role}[${Array.isArray(message.content) ? message.content.map((block: any) => block?.type).join(',') : typeof message.content}]`,
    )
    .join(' ');
}
