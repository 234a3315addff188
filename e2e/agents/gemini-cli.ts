import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AgentProcess } from './agent-process.js';
import { expectations, runAgent, startLoggedEmulator } from './agent-process.js';
import { fixThenResume } from './fix-resume.js';
import { geminiCliPoisonings } from './gemini-cli-poisonings.js';
import type { AgentRunOptions, Harness, Resumed } from './resume-poisoned.js';
import { createPending, resumePoisoned, resumeThrough, resumeThroughRepairers } from './resume-poisoned.js';
import { saveAgentFixtures } from './save-fixtures.js';
import { unstuckMain } from './unstuck-proxy.js';

/**
 * The real Gemini CLI against the emulator's Gemini wire, offline (run.ts puts it in a network
 * namespace of its own). `HOME` is a temporary directory whose `.gemini/settings.json` selects
 * `gemini-api-key` auth with telemetry, usage statistics and auto-update off; `GEMINI_API_KEY` a
 * dummy, `GOOGLE_GEMINI_BASE_URL` the emulator, `GEMINI_CLI_TRUST_WORKSPACE=true`, and
 * `-m gemini-2.5-pro` (the default routing would first ask a flash-lite model to classify). It
 * streams `POST /v1beta/models/…:streamGenerateContent?alt=sse` and writes
 * `~/.gemini/tmp/<project>/chats/session-*.jsonl`, resumed with `--resume latest`.
 */

export const GEMINI_CLI_VERSION = '0.61.0';
const here = fileURLToPath(new URL('.', import.meta.url));
const gemini = join(here, 'node_modules', '.bin', 'gemini');
const fixtures = fileURLToPath(new URL('../../test/fixtures/agents/gemini-cli/', import.meta.url));
const FLAGS = ['--yolo', '--output-format', 'json', '-m', 'gemini-2.5-pro'];
const RESUMED = 'Resumed.';

export async function runGeminiCli(options: AgentRunOptions): Promise<string[]> {
  const { log } = options;
  const { failures, expect } = expectations('gemini-cli', log);
  const root = await mkdtemp(join(tmpdir(), 'unstuck-e2e-gemini-'));
  const home = join(root, 'home');
  const work = join(root, 'work');
  await mkdir(join(home, '.gemini'), { recursive: true });
  await mkdir(work);
  await mkdir(join(root, 'tmp'));
  await writeFile(join(work, 'notes.txt'), 'The secret word is lighthouse.\n');
  await writeFile(join(work, 'other.txt'), 'The other word is harbour.\n');
  await writeFile(
    join(home, '.gemini', 'settings.json'),
    `${JSON.stringify(
      {
        security: { auth: { selectedType: 'gemini-api-key' } },
        general: { disableAutoUpdate: true, disableUpdateNag: true },
        privacy: { usageStatisticsEnabled: false },
        telemetry: { enabled: false },
      },
      null,
      2,
    )}\n`,
  );
  const { emulator, server, seen } = await startLoggedEmulator({ wires: ['gemini'] }, 'contents', log);
  /** `throughUnstuckRun`: `unstuck run -- gemini …` (the built dist/cli/main.js), `baseUrl` the upstream it keeps. */
  const run = (args: string[], baseUrl: string, throughUnstuckRun = false): Promise<AgentProcess> =>
    runAgent(
      throughUnstuckRun ? process.execPath : gemini,
      throughUnstuckRun ? [unstuckMain, 'run', '--', gemini, ...args, ...FLAGS] : [...args, ...FLAGS],
      {
        cwd: work,
        env: {
          PATH: process.env['PATH'] ?? '/usr/bin:/bin',
          HOME: home,
          TMPDIR: join(root, 'tmp'),
          LANG: 'C.UTF-8',
          NO_COLOR: '1',
          GEMINI_API_KEY: 'e2e-dummy-key',
          GOOGLE_GEMINI_BASE_URL: baseUrl,
          GEMINI_CLI_TRUST_WORKSPACE: 'true',
        },
      },
    );
  try {
    log(
      `gemini-cli ${(await runAgent(gemini, ['--version'], { cwd: work, env: { PATH: process.env['PATH'], HOME: home } })).stdout.trim()}`,
    );
    log('gemini-cli 1. a tool loop: read_file notes.txt, then text');
    emulator.push(
      { toolCalls: [{ name: 'read_file', arguments: JSON.stringify({ file_path: join(work, 'notes.txt') }) }] },
      { text: 'The file says the secret word is lighthouse.' },
    );
    const first = toResumed(await run(['-p', 'What does notes.txt say?'], server.url));
    log(`   exit ${first.code}; answer ${JSON.stringify(first.text ?? first.said)}`);
    expect(first.code === 0, 'gemini -p exits 0');
    expect(first.text === 'The file says the secret word is lighthouse.', 'the turn ends with the scripted text');
    expect(
      seen.some((request) => request.status === 200 && hasResponse(request.body, 'lighthouse')),
      "Gemini CLI ran read_file and sent the file's contents back as a functionResponse",
    );
    const file = await findChat(home);
    expect(file !== undefined, 'Gemini CLI wrote ~/.gemini/tmp/<project>/chats/session-*.jsonl');
    if (file === undefined) return failures;
    const original = await readFile(file, 'utf8');
    log(`   chat file: ${original.split('\n').filter(Boolean).length} lines, ${original.length} bytes`);

    const harness: Harness = {
      log,
      expect,
      emulator,
      seen,
      file,
      original,
      answer: RESUMED,
      isGenerate: (request) => /:(?:stream)?[gG]enerateContent$/.test(request.path),
      resume: async (baseUrl) => toResumed(await run(['-p', 'Say it again.', '--resume', 'latest'], baseUrl)),
    };
    const pending = createPending(harness);
    log(
      'gemini-cli 2. the chat file as written and each poisoning, resumed with --resume latest straight at the strict emulator',
    );
    const outcomes = await resumePoisoned(harness, geminiCliPoisonings, server.url, pending);
    const rejected = outcomes.filter((outcome) => outcome.sent && outcome.rules.includes(outcome.poisoning.rule));
    expect(
      rejected.length > 0,
      `at least one reaches the wire and gets the 400 (${rejected.map((outcome) => outcome.poisoning.name).join(', ') || 'none'})`,
    );
    for (const outcome of rejected)
      expect(outcome.resumed.code !== 0, `${outcome.poisoning.name}: sent as is, the resume fails`);

    await resumeThroughRepairers(
      harness,
      outcomes,
      server.url,
      pending,
      {
        fetch: 'gemini-cli 3. those that got the 400, resumed through createSanitizingFetch (a loopback relay)',
        proxy:
          'gemini-cli 3b. the resumes that got the 400, again through the real `unstuck proxy --upstream <emulator>`',
      },
      options.proxy,
    );
    log(
      'gemini-cli 3c. the resumes that got the 400, again with `unstuck run -- gemini …` (GOOGLE_GEMINI_BASE_URL at the emulator: the upstream unstuck run keeps)',
    );
    await resumeThrough(
      {
        ...harness,
        resume: async (baseUrl) => {
          const resumed = await run(['-p', 'Say it again.', '--resume', 'latest'], baseUrl, true);
          const summary = resumed.stderr.split('\n').find((line) => line.startsWith('unstuck: repaired'));
          log(`      stderr: ${summary ?? '(no summary line)'}`);
          return toResumed(resumed);
        },
      },
      outcomes,
      server.url,
      'unstuck run',
      pending,
    );

    log(
      'gemini-cli 3d. the resumes that got the 400, mended on disk by `unstuck fix --write` and resumed straight at the strict emulator (no proxy)',
    );
    await fixThenResume(harness, outcomes, server.url, pending, {
      // Message records `{id, timestamp, type, content, …}` and `{"$set": {"messages": […]}}`; not the header or other `$set`s.
      isHistory: (line) => line.startsWith('{"id":') || line.startsWith('{"$set":{"messages":'),
    });

    log('gemini-cli 4. parallel calls: two read_file calls in one answer, then text (a second session)');
    const parallelBefore = seen.length;
    emulator.push(
      {
        text: 'Reading both files.',
        toolCalls: ['notes.txt', 'other.txt'].map((name) => ({
          name: 'read_file',
          arguments: JSON.stringify({ file_path: join(work, name) }),
        })),
      },
      { text: 'lighthouse and harbour.' },
    );
    const parallel = toResumed(await run(['-p', 'What do notes.txt and other.txt say?'], server.url));
    log(`   exit ${parallel.code}; answer ${JSON.stringify(parallel.text ?? parallel.said)}`);
    expect(parallel.code === 0 && parallel.text === 'lighthouse and harbour.', 'the parallel turn completes');
    expect(
      seen
        .slice(parallelBefore)
        .some(
          (request) =>
            request.status === 200 && hasResponse(request.body, 'lighthouse') && hasResponse(request.body, 'harbour'),
        ),
      'both functionResponses went back in one request',
    );
    const parallelFile = await findChat(home, file);

    if (options.saveFixtures) {
      await saveAgentFixtures({
        directory: fixtures,
        agent: '@google/gemini-cli',
        version: GEMINI_CLI_VERSION,
        name: `read-tool-loop.gemini-cli-${GEMINI_CLI_VERSION}`,
        original,
        outcomes,
        extra:
          parallelFile === undefined
            ? []
            : [[`parallel-read.gemini-cli-${GEMINI_CLI_VERSION}.jsonl`, await readFile(parallelFile, 'utf8')]],
        commands: {
          session: `gemini -p "What does notes.txt say?" ${FLAGS.join(' ')}`,
          parallel: `gemini -p "What do notes.txt and other.txt say?" ${FLAGS.join(' ')}`,
          resume: `gemini -p "Say it again." --resume latest ${FLAGS.join(' ')}`,
        },
        notes: [
          'The format as seen: a header line `{sessionId, projectHash, startTime, lastUpdated, kind}`, then message records `{id, timestamp, type: "user" | "gemini", content, …}` and `{"$set": {…}}` updates (a whole `messages` array, or `lastUpdated`). A `gemini` record is written twice with the same id: first without, then with `toolCalls: [{id, name, args, result: [{functionResponse}], status, …}]`; the tool result is written again as a `user` record whose content is the functionResponse part. Resuming appends to the same file.',
          ...(outcomes.find((outcome) => outcome.poisoning.name === 'response-record-removed')?.resumed.code === 0
            ? [
                "What the run found: the file as written does not resume. Gemini CLI rebuilds the functionResponse from the call record's `toolCalls[].result` and again from the `user` record after it, and sends both in one turn for the one functionCall (the 400 tool-results-excess, exit 144); with that `user` record removed (`response-record-removed`) the resume completes.",
              ]
            : []),
        ],
        originalResumed:
          'as `…as-written.jsonl` (the same bytes): Gemini CLI sends two functionResponse parts for the one functionCall',
        setup:
          'HOME a temporary directory; ~/.gemini/settings.json: security.auth.selectedType "gemini-api-key", general.disableAutoUpdate, privacy.usageStatisticsEnabled false, telemetry.enabled false; GEMINI_API_KEY a dummy, GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:PORT, GEMINI_CLI_TRUST_WORKSPACE=true; inside unshare -n (loopback only)',
      });
      log('   saved the chat files and the poisonings that reached the wire under test/fixtures/agents/gemini-cli/');
    }
  } finally {
    await server.close();
    if (process.env['UNSTUCK_E2E_KEEP'] === '1') log(`kept ${root}`);
    else await rm(root, { recursive: true, force: true });
  }
  return failures;
}

function toResumed(run: AgentProcess): Resumed {
  let text: string | undefined;
  try {
    const parsed = JSON.parse(run.stdout) as { response?: unknown };
    if (typeof parsed.response === 'string') text = parsed.response;
  } catch {
    text = undefined;
  }
  const said = /_ApiError: (\{.*\})/.exec(run.stderr)?.[1] ?? run.stderr.trim().split('\n').slice(-2).join(' ');
  return { code: run.code, text: run.code === 0 ? text : undefined, said: said.slice(0, 300), seconds: run.seconds };
}

/** The newest chat file, other than `besides` (the first session's, when looking for the second). */
async function findChat(home: string, besides?: string): Promise<string | undefined> {
  const tmp = join(home, '.gemini', 'tmp');
  if (!existsSync(tmp)) return undefined;
  const files = (await readdir(tmp, { recursive: true }))
    .filter((entry) => /chats\/session-[^/]+\.jsonl$/.test(entry))
    .map((entry) => join(tmp, entry))
    .filter((path) => path !== besides)
    .sort();
  return files.at(-1);
}

function hasResponse(body: any, text: string): boolean {
  return (
    Array.isArray(body?.contents) &&
    body.contents.some(
      (content: any) =>
        Array.isArray(content?.parts) &&
        content.parts.some((part: any) => part?.functionResponse !== undefined && JSON.stringify(part).includes(text)),
    )
  );
}
