import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expectations, runAgent, startLoggedEmulator } from './agent-process.js';
import { codexPoisonings } from './codex-poisonings.js';
import { fixThenResume } from './fix-resume.js';
import type { AgentRunOptions, Harness, Resumed } from './resume-poisoned.js';
import { createPending, resumePoisoned, resumeThrough, resumeThroughRepairers } from './resume-poisoned.js';
import { saveAgentFixtures } from './save-fixtures.js';
import { unstuckMain } from './unstuck-proxy.js';

/**
 * The real Codex CLI against the emulator's Responses wire, offline (run.ts puts it in a network
 * namespace of its own). `CODEX_HOME` is a temporary directory whose config.toml selects a
 * `[model_providers.unstuck]` entry: `base_url` at the emulator, `wire_api = "responses"`, a dummy
 * key through `env_key`, no retries, no update check. `codex exec` streams `POST /v1/responses`;
 * its shell tool is `exec_command` with `{"cmd": …}`; it writes
 * `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`, resumed with `codex exec … resume <id>`.
 */

export const CODEX_VERSION = '0.171.0';
const here = fileURLToPath(new URL('.', import.meta.url));
const codex = join(here, 'node_modules', '.bin', 'codex');
const fixtures = fileURLToPath(new URL('../../test/fixtures/agents/codex/', import.meta.url));
const EXEC = ['exec', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox'];
const RESUMED = 'Resumed.';
const KEY_ENV = 'UNSTUCK_E2E_OPENAI_KEY';

export async function runCodex(options: AgentRunOptions): Promise<string[]> {
  const { log } = options;
  const { failures, expect } = expectations('codex', log);
  const root = await mkdtemp(join(tmpdir(), 'unstuck-e2e-codex-'));
  const home = join(root, 'codex-home');
  const work = join(root, 'work');
  await mkdir(home);
  await mkdir(work);
  await mkdir(join(root, 'tmp'));
  await writeFile(join(work, 'notes.txt'), 'The secret word is lighthouse.\n');
  await writeFile(join(work, 'other.txt'), 'The other word is harbour.\n');
  const { emulator, server, seen } = await startLoggedEmulator({ wires: ['responses'] }, 'input', log);
  const env: NodeJS.ProcessEnv = {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    HOME: root,
    CODEX_HOME: home,
    TMPDIR: join(root, 'tmp'),
    LANG: 'C.UTF-8',
    NO_COLOR: '1',
    [KEY_ENV]: 'sk-e2e-dummy-key',
  };
  const configure = (baseUrl: string) =>
    writeFile(
      join(home, 'config.toml'),
      [
        'model = "gpt-5-codex"',
        'model_provider = "unstuck"',
        'check_for_update_on_startup = false',
        '',
        '[model_providers.unstuck]',
        'name = "unstuck emulator"',
        `base_url = "${baseUrl}/v1"`,
        'wire_api = "responses"',
        `env_key = "${KEY_ENV}"`,
        'request_max_retries = 0',
        'stream_max_retries = 0',
        '',
      ].join('\n'),
    );
  const exec = async (args: string[], baseUrl: string) => {
    await configure(baseUrl);
    return runAgent(codex, [...EXEC, ...args], { cwd: work, env });
  };
  try {
    log(`codex ${(await runAgent(codex, ['--version'], { cwd: work, env })).stdout.trim()}`);
    log('codex 1. a tool loop: exec_command `cat notes.txt`, then text');
    emulator.push(
      { toolCalls: [{ name: 'exec_command', arguments: JSON.stringify({ cmd: 'cat notes.txt' }) }] },
      { text: 'The file says the secret word is lighthouse.' },
    );
    const first = await exec(['What does notes.txt say?'], server.url);
    log(`   exit ${first.code}; answer ${JSON.stringify(first.stdout.trim())}`);
    expect(first.code === 0, 'codex exec exits 0');
    expect(
      first.stdout.trim() === 'The file says the secret word is lighthouse.',
      'the turn ends with the scripted text',
    );
    expect(
      seen.some((request) => request.status === 200 && hasOutput(request.body, 'lighthouse')),
      "Codex ran exec_command and sent the file's contents back as a function_call_output",
    );
    const sessionId = /session id: (\S+)/.exec(first.stderr)?.[1];
    const file = sessionId === undefined ? undefined : await findRollout(home, sessionId);
    expect(file !== undefined, `Codex wrote $CODEX_HOME/sessions/…/rollout-…-${sessionId}.jsonl`);
    if (file === undefined || sessionId === undefined) return failures;
    const original = await readFile(file, 'utf8');
    log(`   rollout: ${original.split('\n').filter(Boolean).length} lines, ${original.length} bytes`);

    log('codex 2. parallel calls: two exec_command calls in one answer, then text (a second session)');
    const parallelBefore = seen.length;
    emulator.push(
      {
        text: 'Reading both files.',
        toolCalls: ['notes.txt', 'other.txt'].map((name) => ({
          name: 'exec_command',
          arguments: JSON.stringify({ cmd: `cat ${name}` }),
        })),
      },
      { text: 'lighthouse and harbour.' },
    );
    const parallel = await exec(['What do notes.txt and other.txt say?'], server.url);
    log(`   exit ${parallel.code}; answer ${JSON.stringify(parallel.stdout.trim())}`);
    expect(parallel.code === 0 && parallel.stdout.trim() === 'lighthouse and harbour.', 'the parallel turn completes');
    expect(
      seen
        .slice(parallelBefore)
        .some(
          (request) =>
            request.status === 200 && hasOutput(request.body, 'lighthouse') && hasOutput(request.body, 'harbour'),
        ),
      'both outputs went back in one request',
    );
    const parallelId = /session id: (\S+)/.exec(parallel.stderr)?.[1];
    const parallelFile = parallelId === undefined ? undefined : await findRollout(home, parallelId);

    const harness: Harness = {
      log,
      expect,
      emulator,
      seen,
      file,
      original,
      answer: RESUMED,
      isGenerate: (request) => request.path.endsWith('/responses'),
      resume: async (baseUrl) => toResumed(await exec(['resume', sessionId, 'Say it again.'], baseUrl)),
    };
    const pending = createPending(harness);
    log('codex 3. the session as written, resumed straight at the strict emulator (control)');
    pending.ensure();
    const control = await harness.resume(server.url);
    pending.settle(seen.slice(-1));
    log(`   exit ${control.code}; answer ${JSON.stringify(control.text ?? control.said)}`);
    expect(control.code === 0 && control.text === RESUMED, 'the unpoisoned session resumes');
    await writeFile(file, original);

    log('codex 4. each poisoning, resumed straight at the strict emulator');
    const outcomes = await resumePoisoned(harness, codexPoisonings, server.url, pending);
    const rejected = outcomes.filter((outcome) => outcome.sent && outcome.rules.includes(outcome.poisoning.rule));
    expect(
      rejected.length > 0,
      `at least one poisoning reaches the wire and gets the 400 (${rejected.map((outcome) => outcome.poisoning.name).join(', ') || 'none'})`,
    );
    for (const outcome of rejected)
      expect(outcome.resumed.code !== 0, `${outcome.poisoning.name}: sent as is, the resume fails`);
    for (const outcome of outcomes.filter((entry) => !entry.sent))
      expect(outcome.resumed.code === 0, `${outcome.poisoning.name}: mended by Codex, the resume completes`);

    await resumeThroughRepairers(
      harness,
      outcomes,
      server.url,
      pending,
      {
        fetch: 'codex 5. the resumes that got the 400, again through createSanitizingFetch (a loopback relay)',
        proxy: 'codex 6. the resumes that got the 400, again through the real `unstuck proxy --upstream <emulator>`',
      },
      options.proxy,
    );

    log(
      'codex 6b. the resumes that got the 400, mended on disk by `unstuck fix --write` and resumed straight at the strict emulator (no proxy)',
    );
    await fixThenResume(harness, outcomes, server.url, pending, {
      isHistory: (line) => line.includes('"type":"response_item"'),
      normalize: (line) => line.replace(/^(\{"timestamp":"[^"]*",)"ordinal":\d+,/, '$1'),
    });

    log(
      "codex 7. Codex's built-in `openai` provider (config.toml names no model_provider): a new session with only `-c openai_base_url=<emulator>/v1` (the override unstuck run passes), then its poisonings resumed with `unstuck run -- codex …` (OPENAI_BASE_URL at the emulator: the upstream unstuck run keeps)",
    );
    {
      await writeFile(
        join(home, 'config.toml'),
        ['model = "gpt-5-codex"', 'check_for_update_on_startup = false', ''].join('\n'),
      );
      const builtIn: NodeJS.ProcessEnv = {
        ...env,
        CODEX_API_KEY: 'sk-e2e-dummy-key',
        OPENAI_API_KEY: 'sk-e2e-dummy-key',
      };
      const before = seen.length;
      emulator.push(
        { toolCalls: [{ name: 'exec_command', arguments: JSON.stringify({ cmd: 'cat notes.txt' }) }] },
        { text: 'The file says the secret word is lighthouse.' },
      );
      const fresh = await runAgent(
        codex,
        ['-c', `openai_base_url=${JSON.stringify(`${server.url}/v1`)}`, ...EXEC, 'What does notes.txt say?'],
        { cwd: work, env: builtIn, timeoutMs: 120_000 },
      );
      const generated = seen.slice(before).filter((request) => request.path.endsWith('/responses'));
      log(
        `   exit ${fresh.code}; the emulator saw ${seen
          .slice(before)
          .map((request) => `${request.path} ${request.status}`)
          .join(', ')}; answer ${JSON.stringify(fresh.stdout.trim() || toResumed(fresh).said)}`,
      );
      expect(
        fresh.code === 0 && generated.length === 2,
        'with only `-c openai_base_url=…` the built-in provider talks to the emulator (the override unstuck run passes works)',
      );
      const freshId = /session id: (\S+)/.exec(fresh.stderr)?.[1];
      const freshFile = freshId === undefined ? undefined : await findRollout(home, freshId);
      if (freshId !== undefined && freshFile !== undefined) {
        const freshOriginal = await readFile(freshFile, 'utf8');
        const resumeArgs = [...EXEC, 'resume', freshId, 'Say it again.'];
        const runHarness: Harness = {
          ...harness,
          file: freshFile,
          original: freshOriginal,
          resume: async () => {
            const proxyLog = join(root, 'unstuck-run.log');
            await rm(proxyLog, { force: true });
            const run = await runAgent(
              process.execPath,
              [unstuckMain, 'run', '--log', proxyLog, '--', codex, ...resumeArgs],
              { cwd: work, env: { ...builtIn, OPENAI_BASE_URL: `${server.url}/v1` } },
            );
            const summary = run.stderr.split('\n').find((line) => line.startsWith('unstuck: repaired'));
            log(`      stderr: ${summary ?? '(no summary line)'}`);
            // What went through the proxy (its log has method, path, status; never contents or keys).
            const through = existsSync(proxyLog)
              ? (await readFile(proxyLog, 'utf8'))
                  .split('\n')
                  .filter(Boolean)
                  .map((line) => {
                    const entry = JSON.parse(line) as { method?: string; path?: string; status?: number };
                    return `${entry.method ?? '?'} ${entry.path ?? '?'} ${entry.status ?? '?'}`;
                  })
              : [];
            log(`      through the proxy: ${through.join(', ') || 'nothing'}`);
            return toResumed(run);
          },
        };
        const poisonedAgain = outcomes.map((outcome) => ({
          ...outcome,
          text: outcome.poisoning.apply(freshOriginal).text,
        }));
        await resumeThrough(runHarness, poisonedAgain, server.url, 'unstuck run', pending);
      }
    }

    if (options.saveFixtures) {
      await saveAgentFixtures({
        directory: fixtures,
        agent: '@openai/codex',
        version: CODEX_VERSION,
        name: `read-tool-loop.codex-${CODEX_VERSION}`,
        original,
        outcomes,
        extra:
          parallelFile === undefined
            ? []
            : [[`parallel-read.codex-${CODEX_VERSION}.jsonl`, await readFile(parallelFile, 'utf8')]],
        commands: {
          session: `codex ${EXEC.join(' ')} "What does notes.txt say?"`,
          parallel: `codex ${EXEC.join(' ')} "What do notes.txt and other.txt say?"`,
          resume: `codex ${EXEC.join(' ')} resume <session id> "Say it again."`,
        },
        originalResumed: control.code === 0 ? 'completes' : `exit ${control.code}`,
        notes: [
          'The format as seen: one `{timestamp, ordinal, type, payload}` record a line. The history is the `response_item` records, each payload a Responses input item (developer and user `message` items with `input_text`, `function_call` with `id: fc_…` and `call_id`, `function_call_output` with `id: fco_…`, the assistant `message`), each with an `internal_chat_message_metadata_passthrough` field Codex strips before sending; on resume Codex sends them in file order as `input`, then the new user message. Besides them: `session_meta` (first line), `event_msg` (task_started, item_completed, token_count, task_complete, …), `world_state`, `turn_context`, `token_usage_record`. Resuming appends to the same file.',
        ],
        setup:
          'CODEX_HOME a temporary directory; config.toml: model = "gpt-5-codex", model_provider = "unstuck", [model_providers.unstuck] base_url = "http://127.0.0.1:PORT/v1", wire_api = "responses", env_key, request_max_retries = 0, stream_max_retries = 0, check_for_update_on_startup = false; inside unshare -n (loopback only)',
      });
      log('   saved the rollouts and the poisonings that reached the wire under test/fixtures/agents/codex/');
    }
  } finally {
    await server.close();
    if (process.env['UNSTUCK_E2E_KEEP'] === '1') log(`kept ${root}`);
    else await rm(root, { recursive: true, force: true });
  }
  return failures;
}

function toResumed(run: { code: number | null; stdout: string; stderr: string; seconds: number }): Resumed {
  const text = run.stdout.trim();
  return {
    code: run.code,
    text: run.code === 0 && text !== '' ? text : undefined,
    said: run.stderr.trim().split('\n').slice(-2).join(' ').slice(0, 300),
    seconds: run.seconds,
  };
}

async function findRollout(home: string, sessionId: string): Promise<string | undefined> {
  const sessions = join(home, 'sessions');
  if (!existsSync(sessions)) return undefined;
  for (const entry of await readdir(sessions, { recursive: true }))
    if (entry.endsWith(`${sessionId}.jsonl`)) return join(sessions, entry);
  return undefined;
}

function hasOutput(body: any, text: string): boolean {
  return (
    Array.isArray(body?.input) &&
    body.input.some((item: any) => item?.type === 'function_call_output' && JSON.stringify(item.output).includes(text))
  );
}
