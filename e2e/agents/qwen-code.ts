import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AgentProcess } from './agent-process.js';
import { expectations, joinLines, jsonlLines, runAgent, startLoggedEmulator } from './agent-process.js';
import type { AgentRunOptions, Harness } from './resume-poisoned.js';
import { createPending } from './resume-poisoned.js';
import { unstuckMain } from './unstuck-proxy.js';

/**
 * The real Qwen Code against the emulator's chat wire (profile qwen), offline (run.ts puts it in a
 * network namespace of its own). `HOME` is a temporary directory whose `.qwen/settings.json`
 * selects `openai` auth with telemetry, usage statistics and auto-update off; `OPENAI_BASE_URL` the
 * emulator's `/v1`, `OPENAI_API_KEY` a dummy, `OPENAI_MODEL` a Qwen model name. A tool loop
 * (`read_file`, then text) writes `~/.qwen/projects/<cwd-slug>/chats/<id>.jsonl`; each poisoning of
 * that file is resumed with `qwen --auth-type openai -y --resume <id> -p …` straight at the strict
 * emulator, and what reached the wire is looked at: a 400, or Qwen Code's own mend — which, for a
 * result whose id does not name its call, answers the call with "Tool execution result was not
 * recorded" and drops the real output. Then `unstuck fix --write` and the same resume: it must
 * complete with the emulator seeing only valid requests and the real output in them, the file
 * otherwise unchanged.
 */

export const QWEN_CODE_VERSION = '0.24.4';
const here = fileURLToPath(new URL('.', import.meta.url));
const qwen = join(here, 'node_modules', '.bin', 'qwen');
const fixtures = fileURLToPath(new URL('../../test/fixtures/agents/qwen-code/', import.meta.url));
const FLAGS = ['--auth-type', 'openai', '-y', '--output-format', 'json'];
const RESUMED = 'Resumed.';
const OUTPUT = 'The secret word is lighthouse.';
const OTHER = 'The other word is harbour.';
const QWEN_MEND = 'Tool execution result was not recorded';

interface QwenPoisoning {
  name: string;
  what: string;
  apply(text: string): { text: string; lines: number[] };
}

type Rec = Record<string, any>;
const isResult = (record: Rec | undefined) => record?.['type'] === 'tool_result';
const isCall = (record: Rec | undefined) =>
  record?.['type'] === 'assistant' && record['message']?.parts?.some((part: any) => part?.functionCall);

/** Replaces the first record that matches with `change(record)` (a list: several records, none: removed, children re-linked). */
function editRecord(text: string, test: (record: Rec | undefined) => boolean, change: (record: Rec) => Rec[]) {
  const { lines, records } = jsonlLines(text);
  const index = records.findIndex(test);
  if (index < 0) throw new Error('qwen-code poisonings: no such record');
  const record = records[index] as Rec;
  const replacement = change(record);
  lines.splice(index, 1, ...replacement.map((value) => JSON.stringify(value)));
  if (replacement.length === 0)
    for (let at = 0; at < lines.length; at += 1)
      if (records[at >= index ? at + 1 : at]?.['parentUuid'] === record['uuid'])
        lines[at] = (lines[at] as string).replace(
          `"parentUuid":"${record['uuid']}"`,
          `"parentUuid":${JSON.stringify(record['parentUuid'])}`,
        );
  return { text: joinLines(lines), lines: replacement.map((_, offset) => index + 1 + offset) };
}

const withResponseId = (record: Rec, id: string): Rec => ({
  ...record,
  message: {
    ...record['message'],
    parts: record['message'].parts.map((part: any) =>
      part?.functionResponse ? { ...part, functionResponse: { ...part.functionResponse, id } } : part,
    ),
  },
});

export const qwenCodePoisonings: readonly QwenPoisoning[] = [
  {
    name: 'as-written',
    what: 'nothing changed: the chat file as Qwen Code wrote it after one tool call',
    apply: (text) => ({ text, lines: [] }),
  },
  {
    name: 'result-for-another-id',
    what: "the tool_result's functionResponse id names a call that is not there (the result is the call's, its id is not)",
    apply: (text) => editRecord(text, isResult, (record) => [withResponseId(record, 'call_elsewhere')]),
  },
  {
    name: 'result-without-id',
    what: "the tool_result's functionResponse id is empty (a converter that lost it)",
    apply: (text) => editRecord(text, isResult, (record) => [withResponseId(record, '')]),
  },
  {
    name: 'call-without-id',
    what: "the call's functionCall id is gone (the response still carries it)",
    apply: (text) =>
      editRecord(text, isCall, (record) => [
        {
          ...record,
          message: {
            ...record['message'],
            parts: record['message'].parts.map((part: any) => {
              if (!part?.functionCall) return part;
              const { id: _id, ...call } = part.functionCall;
              return { ...part, functionCall: call };
            }),
          },
        },
      ]),
  },
  {
    name: 'result-after-the-answer',
    what: 'the tool_result record written after the final answer (its place in the chain taken by the answer: a late write)',
    apply: (text) => {
      const { lines, records } = jsonlLines(text);
      const result = records.findIndex(isResult);
      const moved = records[result] as Rec;
      const kept = lines.filter((_, index) => index !== result);
      const keptRecords = records.filter((_, index) => index !== result);
      // The result's child now hangs from the call side; the result hangs from the last record.
      const relinked = kept.map((line, index) =>
        keptRecords[index]?.['parentUuid'] === moved['uuid']
          ? line.replace(`"parentUuid":"${moved['uuid']}"`, `"parentUuid":${JSON.stringify(moved['parentUuid'])}`)
          : line,
      );
      const last = keptRecords.at(-1) as Rec;
      relinked.push(JSON.stringify({ ...moved, parentUuid: last['uuid'] }));
      return { text: joinLines(relinked), lines: [relinked.length] };
    },
  },
  {
    name: 'result-twice',
    what: 'the tool_result record written twice (a second record, fresh uuid, the same functionResponse), chained after the first',
    apply: (text) => {
      const { lines, records } = jsonlLines(text);
      const result = records.findIndex(isResult);
      const record = records[result] as Rec;
      const uuid = `${String(record['uuid']).slice(0, -4)}beef`;
      const out = lines.map((line, index) =>
        records[index]?.['parentUuid'] === record['uuid']
          ? line.replace(`"parentUuid":"${record['uuid']}"`, `"parentUuid":"${uuid}"`)
          : line,
      );
      out.splice(result + 1, 0, JSON.stringify({ ...record, uuid, parentUuid: record['uuid'] }));
      return { text: joinLines(out), lines: [result + 2, result + 3] };
    },
  },
  {
    name: 'whitespace-text-beside-call',
    what: "the call record's parts are [text ' ', functionCall] (a whitespace-only text streamed before the call)",
    apply: (text) =>
      editRecord(text, isCall, (record) => [
        { ...record, message: { ...record['message'], parts: [{ text: ' ' }, ...record['message'].parts] } },
      ]),
  },
  {
    name: 'result-lost',
    what: 'the tool_result record gone, its child re-linked to the call (Qwen Code killed while the tool ran)',
    apply: (text) => editRecord(text, isResult, () => []),
  },
];

export async function runQwenCode(options: AgentRunOptions): Promise<string[]> {
  const { log } = options;
  const { failures, expect } = expectations('qwen-code', log);
  const root = await mkdtemp(join(tmpdir(), 'unstuck-e2e-qwen-'));
  const home = join(root, 'home');
  const work = join(root, 'work');
  await mkdir(join(home, '.qwen'), { recursive: true });
  await mkdir(work);
  await mkdir(join(root, 'tmp'));
  await writeFile(join(work, 'notes.txt'), `${OUTPUT}\n`);
  await writeFile(
    join(home, '.qwen', 'settings.json'),
    `${JSON.stringify(
      {
        security: { auth: { selectedType: 'openai' } },
        general: { disableAutoUpdate: true, disableUpdateNag: true },
        privacy: { usageStatisticsEnabled: false },
        telemetry: { enabled: false },
        // Its background memory extraction sends the whole history once more after each turn: off, one request a turn.
        memory: { enableManagedAutoMemory: false, enableManagedAutoDream: false },
      },
      null,
      2,
    )}\n`,
  );
  const { emulator, server, seen } = await startLoggedEmulator({ wires: ['chat'], profile: 'qwen' }, 'messages', log);
  const env = (baseUrl: string): NodeJS.ProcessEnv => ({
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    HOME: home,
    TMPDIR: join(root, 'tmp'),
    LANG: 'C.UTF-8',
    NO_COLOR: '1',
    QWEN_CODE_SUPPRESS_YOLO_WARNING: '1',
    OPENAI_BASE_URL: `${baseUrl}/v1`,
    OPENAI_API_KEY: 'e2e-dummy-key',
    OPENAI_MODEL: 'qwen3-coder-plus',
  });
  /** `throughUnstuckRun`: `unstuck run -- qwen …` (the built dist/cli/main.js), `baseUrl` the upstream it keeps. */
  const run = (args: string[], baseUrl: string, throughUnstuckRun = false): Promise<AgentProcess> =>
    runAgent(
      throughUnstuckRun ? process.execPath : qwen,
      throughUnstuckRun ? [unstuckMain, 'run', '--', qwen, ...FLAGS, ...args] : [...FLAGS, ...args],
      { cwd: work, env: env(baseUrl) },
    );
  try {
    log(`qwen-code ${(await runAgent(qwen, ['--version'], { cwd: work, env: env(server.url) })).stdout.trim()}`);
    log('qwen-code 1. a tool loop: read_file notes.txt, then text');
    emulator.push(
      { toolCalls: [{ name: 'read_file', arguments: JSON.stringify({ file_path: join(work, 'notes.txt') }) }] },
      { text: 'The file says the secret word is lighthouse.' },
    );
    const first = await run(['-p', 'What does notes.txt say?'], server.url);
    const firstAnswer = answerOf(first);
    log(`   exit ${first.code}; answer ${JSON.stringify(firstAnswer ?? first.stderr.slice(-300))}`);
    expect(first.code === 0, 'qwen -p exits 0');
    expect(firstAnswer === 'The file says the secret word is lighthouse.', 'the turn ends with the scripted text');
    expect(
      seen.some((request) => request.status === 200 && toolOutputs(request.body).some((text) => text.includes(OUTPUT))),
      "Qwen Code ran read_file and sent the file's contents back as a tool message",
    );
    const file = await findChat(home);
    expect(file !== undefined, 'Qwen Code wrote ~/.qwen/projects/<cwd-slug>/chats/<id>.jsonl');
    if (file === undefined) return failures;
    const sessionId = (file.split('/').at(-1) as string).replace(/\.jsonl$/, '');
    const original = await readFile(file, 'utf8');
    log(`   chat file: ${original.split('\n').filter(Boolean).length} records, ${original.length} bytes`);

    const harness: Harness = {
      log,
      expect,
      emulator,
      seen,
      file,
      original,
      answer: RESUMED,
      isGenerate: (request) => request.path === '/v1/chat/completions',
      resume: async () => {
        throw new Error('not used');
      },
    };
    const pending = createPending(harness);
    const resume = async (baseUrl: string, throughUnstuckRun = false, id = sessionId) => {
      const before = seen.length;
      pending.ensure();
      const resumed = await run(['--resume', id, 'Say it again.'], baseUrl, throughUnstuckRun);
      const requests = seen.slice(before);
      pending.settle(requests);
      const sent = (text: string) =>
        requests.some((request) => toolOutputs(request.body).some((entry) => entry.includes(text)));
      return {
        resumed,
        answer: resumed.code === 0 ? answerOf(resumed) : undefined,
        requests,
        statuses: requests.map((request) => request.status).join(', ') || 'nothing',
        outputSent: sent(OUTPUT),
        mendSent: sent(QWEN_MEND),
        sent,
      };
    };

    log(
      'qwen-code 2. the chat file as written and each poisoning, resumed with --resume <id> straight at the strict emulator',
    );
    const outcomes: {
      poisoning: QwenPoisoning;
      text: string;
      lines: number[];
      verdict: string;
      lost: boolean;
      rejected: boolean;
    }[] = [];
    for (const poisoning of qwenCodePoisonings) {
      const poisoned = poisoning.apply(original);
      await writeFile(file, poisoned.text);
      const result = await resume(server.url);
      const rejected = result.requests.some((request) => request.status === 400);
      // The real output is in the file (every poisoning but result-lost keeps it): did it reach the wire?
      const inFile = poisoned.text.includes(OUTPUT.replaceAll('.', '.'));
      const lost = poisoning.name !== 'result-lost' && inFile && !result.outputSent;
      const verdict = rejected
        ? `the 400 (${[...new Set(result.requests.flatMap((request) => request.violations.map((violation) => violation.rule)))].join(', ')})`
        : lost
          ? `mended by Qwen Code by dropping the real tool output${result.mendSent ? ` (sent "${QWEN_MEND}…" in its place)` : ''}`
          : result.mendSent
            ? `mended by Qwen Code with "${QWEN_MEND}…" (there was no output to keep)`
            : 'resumed with the real output';
      log(
        `   ${poisoning.name} (lines ${poisoned.lines.join(', ') || 'none'}): exit ${result.resumed.code}, the emulator saw ${result.statuses} -> ${verdict}`,
      );
      log(`      answer ${JSON.stringify(result.answer ?? result.resumed.stderr.trim().slice(-200))}`);
      outcomes.push({ poisoning, text: poisoned.text, lines: poisoned.lines, verdict, lost, rejected });
      await writeFile(file, original);
    }
    expect(
      outcomes.find((outcome) => outcome.poisoning.name === 'as-written')?.verdict === 'resumed with the real output',
      'the file as written resumes, the real output in the request',
    );
    const broken = outcomes.filter((outcome) => outcome.lost || outcome.rejected);
    expect(
      broken.length > 0,
      `at least one poisoning loses the real output or gets the 400 (${broken.map((outcome) => outcome.poisoning.name).join(', ') || 'none'})`,
    );

    log('qwen-code 3. those, mended on disk by `unstuck fix --write`, resumed straight at the strict emulator');
    for (const outcome of [...broken, ...outcomes.filter((entry) => entry.poisoning.name === 'result-lost')]) {
      await writeFile(file, outcome.text);
      const fixed = spawnSync(process.execPath, [unstuckMain, 'fix', '--write', file], { encoding: 'utf8' });
      const mended = await readFile(file, 'utf8');
      const diff = lineDiff(outcome.text, mended);
      log(
        `   ${outcome.poisoning.name}: unstuck fix exit ${fixed.status}; ${diff.kept} line(s) byte for byte, ${diff.changed} rewritten, ${diff.added} added, ${diff.removed} removed`,
      );
      for (const line of fixed.stderr.trim().split('\n')) log(`      ${line}`);
      expect(fixed.status === 0, `${outcome.poisoning.name}: unstuck fix --write repairs the chat file`);
      expect(
        diff.changed + diff.removed <= Math.max(1, outcome.lines.length) + 1 && diff.otherFields.length === 0,
        `${outcome.poisoning.name}: only the records the repair needed changed, in message.parts and parentUuid only (the rest byte for byte)${diff.otherFields.length > 0 ? `: also ${diff.otherFields.join(', ')}` : ''}`,
      );
      const result = await resume(server.url);
      log(
        `   resumed: exit ${result.resumed.code}, the emulator saw ${result.statuses}; answer ${JSON.stringify(result.answer ?? result.resumed.stderr.trim().slice(-200))}`,
      );
      expect(
        result.resumed.code === 0 && result.answer === RESUMED,
        `${outcome.poisoning.name}: after unstuck fix --write, the resume straight at the strict emulator completes`,
      );
      expect(
        result.requests.length > 0 && result.requests.every((request) => request.status === 200),
        `${outcome.poisoning.name}: after the fix the emulator saw only valid requests`,
      );
      if (outcome.poisoning.name !== 'result-lost')
        expect(
          result.outputSent,
          `${outcome.poisoning.name}: the real tool output is in the request (kept by the fix)`,
        );
      await rm(`${file}.bak`, { force: true });
      await writeFile(file, original);
    }

    const viaRun = broken.find((outcome) => outcome.rejected) ?? broken[0];
    if (viaRun !== undefined) {
      log(
        `qwen-code 4. ${viaRun.poisoning.name} resumed with \`unstuck run -- qwen …\` (OPENAI_BASE_URL at the emulator: the upstream unstuck run keeps)`,
      );
      await writeFile(file, viaRun.text);
      const result = await resume(server.url, true);
      const summary = result.resumed.stderr.split('\n').find((line) => line.startsWith('unstuck: repaired'));
      log(
        `   exit ${result.resumed.code}, the emulator saw ${result.statuses}; answer ${JSON.stringify(result.answer ?? result.resumed.stderr.trim().slice(-200))}`,
      );
      log(`      stderr: ${summary ?? '(no summary line)'}`);
      expect(
        result.resumed.code === 0 && result.answer === RESUMED,
        `${viaRun.poisoning.name}: through unstuck run the resume completes`,
      );
      expect(
        result.requests.length > 0 && result.requests.every((request) => request.status === 200),
        `${viaRun.poisoning.name}: through unstuck run the emulator saw only valid requests`,
      );
      // Qwen Code mends before it sends: the proxy gets a valid request with the output already gone. Only the fix on disk keeps it.
      log(
        `   through unstuck run the real output ${result.outputSent ? 'reached' : 'did not reach'} the wire${result.outputSent ? '' : ' (Qwen Code mends before it sends: the proxy sees a valid request with the output already dropped; only fix on disk keeps it)'}`,
      );
      await writeFile(file, original);
    }

    log('qwen-code 5. parallel calls: two read_file calls in one answer, then text (a second session)');
    await writeFile(join(work, 'other.txt'), `${OTHER}\n`);
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
    const parallel = await run(['-p', 'What do notes.txt and other.txt say?'], server.url);
    log(`   exit ${parallel.code}; answer ${JSON.stringify(answerOf(parallel) ?? parallel.stderr.slice(-300))}`);
    expect(parallel.code === 0 && answerOf(parallel) === 'lighthouse and harbour.', 'the parallel turn completes');
    expect(
      seen
        .slice(parallelBefore)
        .some((request) => request.status === 200 && toolOutputs(request.body).some((text) => text.includes(OTHER))),
      'both results went back',
    );
    const parallelFile = await findChat(home, file);
    let parallelText: string | undefined;
    if (parallelFile !== undefined) {
      parallelText = await readFile(parallelFile, 'utf8');
      const parallelId = (parallelFile.split('/').at(-1) as string).replace(/\.jsonl$/, '');
      const results = jsonlLines(parallelText).records.filter(isResult).length;
      log(`   chat file: ${parallelText.split('\n').filter(Boolean).length} records, ${results} tool_result records`);
      // The second result's id no longer names its call: Qwen Code answers that call with its error and drops the result.
      const { lines, records } = jsonlLines(parallelText);
      const second = records.findLastIndex(isResult);
      lines[second] = JSON.stringify(withResponseId(records[second] as Rec, 'call_elsewhere'));
      const poisoned = joinLines(lines);
      await writeFile(parallelFile, poisoned);
      const asIs = await resume(server.url, false, parallelId);
      log(
        `   second-result-for-another-id: exit ${asIs.resumed.code}, the emulator saw ${asIs.statuses}; both outputs sent: ${asIs.sent(OUTPUT) && asIs.sent(OTHER)}${asIs.mendSent ? ` ("${QWEN_MEND}…" sent)` : ''}`,
      );
      expect(!asIs.sent(OTHER), "second-result-for-another-id: Qwen Code's own mend drops the second output");
      await writeFile(parallelFile, poisoned);
      const fixed = spawnSync(process.execPath, [unstuckMain, 'fix', '--write', parallelFile], { encoding: 'utf8' });
      const diff = lineDiff(poisoned, await readFile(parallelFile, 'utf8'));
      log(
        `   unstuck fix exit ${fixed.status}; ${diff.kept} line(s) byte for byte, ${diff.changed} rewritten, ${diff.added} added, ${diff.removed} removed`,
      );
      for (const line of fixed.stderr.trim().split('\n')) log(`      ${line}`);
      expect(
        fixed.status === 0 && diff.otherFields.length === 0,
        'second-result-for-another-id: unstuck fix --write repairs it',
      );
      const after = await resume(server.url, false, parallelId);
      log(
        `   resumed: exit ${after.resumed.code}, the emulator saw ${after.statuses}; answer ${JSON.stringify(after.answer ?? after.resumed.stderr.trim().slice(-200))}`,
      );
      expect(
        after.resumed.code === 0 &&
          after.answer === RESUMED &&
          after.requests.every((request) => request.status === 200),
        'second-result-for-another-id: after the fix the resume completes, only valid requests',
      );
      expect(
        after.sent(OUTPUT) && after.sent(OTHER),
        'second-result-for-another-id: both real outputs are in the request',
      );
    }

    if (options.saveFixtures) {
      await mkdir(fixtures, { recursive: true });
      if (parallelText !== undefined)
        await writeFile(join(fixtures, `parallel-read.qwen-code-${QWEN_CODE_VERSION}.jsonl`), parallelText);
      const name = `read-tool-loop.qwen-code-${QWEN_CODE_VERSION}`;
      await writeFile(join(fixtures, `${name}.jsonl`), original);
      for (const outcome of outcomes.filter((entry) => entry.poisoning.name !== 'as-written'))
        await writeFile(join(fixtures, `${name}.${outcome.poisoning.name}.jsonl`), outcome.text);
      const meta = {
        agent: '@qwen-code/qwen-code',
        version: QWEN_CODE_VERSION,
        recorded: new Date().toISOString(),
        by: 'npm run e2e:agents -- --agent qwen-code --save-fixtures (e2e/agents)',
        setup:
          'HOME a temporary directory; ~/.qwen/settings.json: security.auth.selectedType "openai", general.disableAutoUpdate, privacy.usageStatisticsEnabled false, telemetry.enabled false, memory.enableManagedAutoMemory and enableManagedAutoDream false; OPENAI_BASE_URL=http://127.0.0.1:PORT/v1, OPENAI_API_KEY a dummy, OPENAI_MODEL=qwen3-coder-plus; inside unshare -n (loopback only); the emulator\'s chat wire, profile qwen',
        commands: {
          session: `qwen ${FLAGS.join(' ')} -p "What does notes.txt say?"`,
          resume: `qwen ${FLAGS.join(' ')} --resume <id> "Say it again."`,
          parallel: `qwen ${FLAGS.join(' ')} -p "What do notes.txt and other.txt say?"`,
        },
        files: [
          { file: `${name}.jsonl`, what: 'the chat file as Qwen Code wrote it', resumed: outcomes[0]?.verdict },
          ...(parallelText === undefined
            ? []
            : [
                {
                  file: `parallel-read.qwen-code-${QWEN_CODE_VERSION}.jsonl`,
                  what: 'a second session: two read_file calls in one answer, then text',
                  resumed:
                    "with the second result's id changed: Qwen Code drops that output; unstuck fix --write keeps it",
                },
              ]),
          ...outcomes
            .filter((entry) => entry.poisoning.name !== 'as-written')
            .map((entry) => ({
              file: `${name}.${entry.poisoning.name}.jsonl`,
              what: entry.poisoning.what,
              lines: entry.lines,
              resumed: entry.verdict,
            })),
        ],
      };
      await writeFile(join(fixtures, 'meta.json'), `${JSON.stringify(meta, null, 2)}\n`);
      const readme = [
        `# @qwen-code/qwen-code ${QWEN_CODE_VERSION} chat files, written by the real binary`,
        '',
        `Recorded ${meta.recorded.slice(0, 10)} by \`${meta.by}\` against unstuck's emulator, offline.`,
        `Setup: ${meta.setup}.`,
        '',
        `- session: \`${meta.commands.session}\``,
        `- resume: \`${meta.commands.resume}\``,
        '',
        'Nothing here is hand-written except the poisonings, made by e2e/agents/qwen-code.ts from the first file (every other line byte for byte).',
        '',
        '| file | what it is | on resume straight at the strict emulator |',
        '| --- | --- | --- |',
        ...meta.files.map((entry) => `| \`${entry.file}\` | ${entry.what} | ${entry.resumed} |`),
        '',
        'The format as seen: one record a line, `{uuid, parentUuid, sessionId, timestamp, type: "user" | "assistant" | "tool_result" | "system", provenance, cwd, version, message?: {role, parts}}`; parts in Gemini form (`functionCall` / `functionResponse`, each with the call id); system records (`attribution_snapshot`, `ui_telemetry`) are links of the chain with no message. Resuming appends to the same file.',
        '',
        'meta.json has the same in machine form.',
        '',
      ].join('\n');
      await writeFile(join(fixtures, 'README.md'), readme);
      log('   saved the chat file and its poisonings under test/fixtures/agents/qwen-code/');
    }
  } finally {
    await server.close();
    if (process.env['UNSTUCK_E2E_KEEP'] === '1') log(`kept ${root}`);
    else await rm(root, { recursive: true, force: true });
  }
  return failures;
}

/** The `result` of the JSON array `qwen --output-format json` prints. */
function answerOf(run: AgentProcess): string | undefined {
  try {
    const events = JSON.parse(run.stdout) as { type?: string; result?: unknown }[];
    const result = events.findLast((event) => event.type === 'result')?.result;
    return typeof result === 'string' ? result : undefined;
  } catch {
    return undefined;
  }
}

/** The newest chat file, other than `besides` (the first session's, when looking for the second). */
async function findChat(home: string, besides?: string): Promise<string | undefined> {
  const projects = join(home, '.qwen', 'projects');
  if (!existsSync(projects)) return undefined;
  const files = (await readdir(projects, { recursive: true }))
    .filter((entry) => /chats\/[^/]+\.jsonl$/.test(entry))
    .map((entry) => join(projects, entry))
    .filter((entry) => entry !== besides)
    .sort();
  return files.at(-1);
}

/** The text of every tool message of a chat request. */
function toolOutputs(body: any): string[] {
  if (!Array.isArray(body?.messages)) return [];
  return body.messages
    .filter((message: any) => message?.role === 'tool' || message?.role === 'user')
    .map((message: any) => (typeof message.content === 'string' ? message.content : JSON.stringify(message.content)));
}

/**
 * How two JSONL texts differ, line by line: kept as they are, rewritten (same uuid), added, removed; and for the
 * rewritten ones, any field other than `message.parts` and `parentUuid` that changed (or moved in the key order).
 */
function lineDiff(
  before: string,
  after: string,
): { kept: number; changed: number; added: number; removed: number; otherFields: string[] } {
  const old = jsonlLines(before);
  const now = jsonlLines(after);
  const oldLines = new Set(old.lines);
  const oldUuids = new Map(old.records.map((record, index) => [record?.['uuid'], old.lines[index]]));
  const nowUuids = new Set(now.records.map((record) => record?.['uuid']));
  let kept = 0;
  let changed = 0;
  let added = 0;
  const otherFields: string[] = [];
  const rest = (record: Rec) => {
    const { parentUuid: _parent, message, ...others } = record;
    const { parts: _parts, ...messageRest } = (message ?? {}) as Rec;
    return JSON.stringify({ ...others, message: messageRest });
  };
  now.lines.forEach((line, index) => {
    const record = now.records[index];
    if (oldLines.has(line)) kept += 1;
    else if (oldUuids.has(record?.['uuid'])) {
      changed += 1;
      const was = JSON.parse(oldUuids.get(record?.['uuid']) as string) as Rec;
      if (rest(was) !== rest(record as Rec)) otherFields.push(`record ${record?.['uuid']}`);
    } else added += 1;
  });
  const removed = old.records.filter((record) => !nowUuids.has(record?.['uuid'])).length;
  return { kept, changed, added, removed, otherFields };
}
