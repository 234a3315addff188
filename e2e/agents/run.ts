/**
 * `npm run e2e:agents`: the real Claude Code against the unstuck emulator's Anthropic wire, offline;
 * then Codex CLI (Responses wire, codex.ts) and Gemini CLI (Gemini wire, gemini-cli.ts). `--agent
 * claude-code|codex|gemini-cli` (repeatable) runs only those. Codex and Gemini CLI take a `proxy`
 * option (resume-poisoned.ts AgentRunOptions): run.ts passes one that starts the real `unstuck proxy`
 * process (dist/cli/main.js, unstuck-proxy.ts) in front of the emulator, so the resumes that got
 * the 400 are resumed once more through it.
 *
 * 1. Installs e2e/agents' pinned `@anthropic-ai/claude-code` (its own lockfile) when it is missing.
 * 2. Re-runs itself inside `unshare -n` (a network namespace with only loopback, brought up inside),
 *    so the agent cannot reach anything but the emulator; when unshare is refused it says so and
 *    falls back to the agent's own switches (below), still on 127.0.0.1.
 * 3. A tool loop: `claude -p` with HOME in a temporary directory, `ANTHROPIC_BASE_URL` at the
 *    emulator, a dummy key, nonessential traffic, auto-update and telemetry off. The script answers
 *    with a `tool_use` of Claude Code's `Read` tool, then text. Checks that Claude Code ran the tool
 *    and wrote `~/.claude/projects/<cwd>/<session>.jsonl`.
 * 4. Poisons that JSONL in a shape Claude Code does not heal by itself (a `tool_use` beside a
 *    whitespace-only text block, NousResearch/hermes-agent#70475) and resumes it with
 *    `claude --resume <id> -p` straight at the strict emulator: it must get Anthropic's 400.
 *
 * 5. Each poisoning Claude Code sends as is, resumed with `unstuck run -- claude --resume <id> -p`
 *    (step 3a): the proxy in-process, the emulator as the upstream it keeps from ANTHROPIC_BASE_URL.
 *
 * 6. Claude Code interactive in tmux through `unstuck run -- claude` (claude-interactive.ts): a
 *    prompt answered through the proxy, a window resize, Ctrl-C twice; its exit code, nothing left.
 *
 * `--save-fixtures` copies the session file Claude Code wrote, and its poisoned copy, to
 * test/fixtures/agents/claude-code/. Exit 0 when every expectation holds; each line of the
 * emulator's log (path, status, rule; never contents) is printed.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { EmulatedRequest } from '../../src/emulator/index.js';
import { createEmulator } from '../../src/emulator/index.js';
import { listenOn } from '../../src/emulator/listen.js';
import type { RepairEvent } from '../../src/http/index.js';
import { createSanitizingFetch } from '../../src/http/index.js';
import { resumeCutAtCall } from './claude-code-cut.js';
import { runClaudeInteractive } from './claude-interactive.js';
import { runCline } from './cline.js';
import { runCodex } from './codex.js';
import { runGeminiCli } from './gemini-cli.js';
import { runOpenCode } from './opencode.js';
import type { Poisoning } from './poison.js';
import { poisonings } from './poison.js';
import { runQwenCode } from './qwen-code.js';
import { relayThrough } from './sanitizing-relay.js';
import { startUnstuckProxy } from './unstuck-proxy.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const fixtures = fileURLToPath(new URL('../../test/fixtures/agents/claude-code/', import.meta.url));
const claude = join(here, 'node_modules', '.bin', 'claude');
const unstuckCli = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const CLAUDE_CODE_VERSION = '2.1.332';
const INSIDE = 'UNSTUCK_E2E_AGENTS_NETNS';
const saveFixtures = process.argv.includes('--save-fixtures');

const log = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

async function main(): Promise<number> {
  if (
    !existsSync(claude) ||
    !existsSync(join(here, 'node_modules', '.bin', 'codex')) ||
    !existsSync(join(here, 'node_modules', '.bin', 'gemini')) ||
    !existsSync(join(here, 'node_modules', '.bin', 'qwen')) ||
    !existsSync(join(here, 'node_modules', '.bin', 'cline')) ||
    (process.platform === 'linux' &&
      process.arch === 'x64' &&
      !existsSync(join(here, 'node_modules', 'opencode-linux-x64')))
  ) {
    log('installing the agents pinned in e2e/agents/package-lock.json');
    execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: here, stdio: 'inherit' });
  }
  if (process.env[INSIDE] === undefined && process.env['UNSTUCK_E2E_NO_NETNS'] === '1') {
    log('note: UNSTUCK_E2E_NO_NETNS=1: not using a network namespace');
    process.env[INSIDE] = 'host';
  }
  if (process.env[INSIDE] === undefined) {
    const probe = spawnSync('unshare', ['-n', 'sh', '-c', 'ip link set lo up'], { stdio: 'ignore' });
    if (probe.status === 0) {
      const child = spawnSync(
        'unshare',
        [
          '-n',
          'sh',
          '-c',
          'ip link set lo up && exec "$0" "$@"',
          process.execPath,
          ...process.execArgv,
          fileURLToPath(import.meta.url),
          ...process.argv.slice(2),
        ],
        {
          stdio: 'inherit',
          env: { ...process.env, [INSIDE]: 'netns' },
        },
      );
      return child.status ?? 1;
    }
    log(
      `note: unshare -n was refused (${probe.error?.message ?? `exit ${probe.status}`}); running on the host's loopback, kept offline by Claude Code's own switches only`,
    );
    process.env[INSIDE] = 'host';
  }
  log(
    `network: ${process.env[INSIDE] === 'netns' ? 'a namespace of its own (unshare -n), loopback only' : "the host's, agent switches only"}`,
  );
  const selected = selectedAgents();
  const others: string[] = [];
  const proxy = (upstream: string) => startUnstuckProxy(upstream, log);
  if (selected.has('codex')) others.push(...(await runCodex({ log, saveFixtures, proxy })));
  if (selected.has('gemini-cli')) others.push(...(await runGeminiCli({ log, saveFixtures, proxy })));
  if (selected.has('opencode')) others.push(...(await runOpenCode({ log, saveFixtures, proxy })));
  if (selected.has('qwen-code')) others.push(...(await runQwenCode({ log, saveFixtures, proxy })));
  if (selected.has('cline')) others.push(...(await runCline({ log, saveFixtures, proxy })));
  if (!selected.has('claude-code')) return report(others);
  log(`claude ${run(claude, ['--version']).trim()}`);

  const root = await mkdtemp(join(tmpdir(), 'unstuck-e2e-claude-'));
  const failures: string[] = [...others];
  const expect = (ok: boolean, what: string): void => {
    log(`${ok ? 'ok' : 'FAILED'}: ${what}`);
    if (!ok) failures.push(what);
  };
  try {
    const home = join(root, 'home');
    const work = join(root, 'work');
    await mkdir(home);
    await mkdir(work);
    await writeFile(join(work, 'notes.txt'), 'The secret word is lighthouse.\n');
    const seen: EmulatedRequest[] = [];
    const emulator = createEmulator({
      wires: ['anthropic'],
      onRequest: (request) => {
        seen.push(request);
        const first = request.violations[0];
        log(
          `  emulator: ${request.path} ${request.status}${first === undefined ? '' : ` ${first.rule} messages.${first.index}`}`,
        );
        if (process.env['UNSTUCK_E2E_SHAPES'] === '1') log(`    shape: ${shapeOf(request.body)}`);
      },
    });
    const server = await emulator.listen({ host: '127.0.0.1' });
    try {
      const env = agentEnv(home, server.url);
      const sessionId = '7f3c2a10-5b1e-4c8d-9a2f-0e6d4b8c1a01';

      log('1. a tool loop: Read, then text');
      emulator.push(
        { toolCalls: [{ name: 'Read', arguments: JSON.stringify({ file_path: join(work, 'notes.txt') }) }] },
        { text: 'The file says the secret word is lighthouse.' },
      );
      const first = await agent(['-p', 'What does notes.txt say?', '--session-id', sessionId, ...AGENT_FLAGS], {
        cwd: work,
        env,
      });
      log(`   exit ${first.code}; result: ${JSON.stringify(first.result?.result ?? first.stderr.slice(0, 300))}`);
      expect(first.code === 0, 'claude -p exits 0');
      expect(
        first.result?.result === 'The file says the secret word is lighthouse.',
        'the turn ends with the scripted text',
      );
      const toolRound = seen.find((request) => request.status === 200 && hasToolResult(request.body, 'lighthouse'));
      expect(toolRound !== undefined, "Claude Code ran Read and sent the file's contents back as a tool_result");
      const file = await findSession(home, sessionId);
      expect(file !== undefined, `Claude Code wrote ~/.claude/projects/<cwd>/${sessionId}.jsonl`);
      if (file === undefined) return report(failures);
      const original = await readFile(file, 'utf8');
      log(`   session file: ${original.split('\n').filter(Boolean).length} lines, ${original.length} bytes`);

      // A rejected request does not use up its step: one answer is kept pending for the next resume.
      let pending = 0;
      log('2. each poisoning, resumed with `claude --resume` straight at the strict emulator');
      const outcomes: {
        poisoning: Poisoning;
        code: number | null;
        rules: string[];
        requests: number;
        seconds: number;
        text: string;
        sent: boolean;
      }[] = [];
      for (const poisoning of poisonings) {
        let poisoned: ReturnType<Poisoning['apply']>;
        try {
          poisoned = poisoning.apply(original);
        } catch (error) {
          // This session has no line of the kind the poisoning edits (e.g. no api-request-blob): skip it, say so.
          log(`   ${poisoning.name}: skipped: ${error instanceof Error ? error.message : String(error)}`);
          continue;
        }
        await writeFile(file, poisoned.text);
        const before = seen.length;
        pending = answerPending(emulator, pending);
        const started = performance.now();
        const resumed = await agent(['--resume', sessionId, '-p', 'Say it again.', ...AGENT_FLAGS], { cwd: work, env });
        const seconds = (performance.now() - started) / 1000;
        const requests = seen.slice(before);
        pending -= requests.filter((request) => request.status === 200).length;
        const rules: string[] = requests
          .filter((request) => request.status === 400)
          .map((request) => request.violations[0]?.rule ?? 'shape');
        const sent = requests.some((request) => poisoning.sent(request.body));
        outcomes.push({
          poisoning,
          code: resumed.code,
          rules,
          requests: requests.length,
          seconds,
          text: poisoned.text,
          sent,
        });
        const verdict = !sent
          ? 'healed by Claude Code (the construct never reached the wire)'
          : rules.includes(poisoning.rule)
            ? `sent as is: the 400 (${poisoning.rule})`
            : `sent as is, but the emulator (the core's Anthropic rules) did not reject it: ${poisoning.rule} not detected`;
        log(
          `   ${poisoning.name} (lines ${poisoned.lines.join(', ')}): exit ${resumed.code}, ${requests.length} requests in ${seconds.toFixed(1)} s, 400s: ${rules.join(', ') || 'none'} -> ${verdict}`,
        );
        log(`      ${JSON.stringify(resumed.result?.result ?? resumed.stderr.slice(0, 200))}`);
        await writeFile(file, original);
      }
      const unhealed = outcomes.filter(
        (outcome) => outcome.code !== 0 && outcome.rules.includes(outcome.poisoning.rule),
      );
      expect(
        unhealed.length > 0,
        `at least one poisoning is not healed by Claude Code and gets the 400 (${unhealed.map((outcome) => outcome.poisoning.name).join(', ') || 'none'})`,
      );
      for (const outcome of outcomes) {
        if (outcome.sent && !outcome.rules.includes(outcome.poisoning.rule))
          log(
            `finding: ${outcome.poisoning.name} reached the wire and the core's Anthropic rules did not reject it (${outcome.poisoning.rule} is not detected by check with format 'anthropic-messages')`,
          );
        else if (outcome.sent)
          expect(
            outcome.code !== 0,
            `${outcome.poisoning.name}: sent as is, the strict emulator answers ${outcome.poisoning.rule} and the resume fails`,
          );
        else expect(outcome.code === 0, `${outcome.poisoning.name}: healed by Claude Code, the resume completes`);
      }

      log(
        '3. the poisonings Claude Code sends as they are, resumed through createSanitizingFetch (a loopback relay in front of the emulator)',
      );
      const repairs: RepairEvent[] = [];
      const relay = await listenOn(
        relayThrough(createSanitizingFetch({ onRepair: (event) => repairs.push(event) }), server.url),
        { port: 0, host: '127.0.0.1' },
      );
      try {
        for (const outcome of outcomes.filter((entry) => entry.sent && entry.rules.includes(entry.poisoning.rule))) {
          await writeFile(file, outcome.text);
          const before = seen.length;
          const repairedBefore = repairs.length;
          pending = answerPending(emulator, pending);
          const resumed = await agent(['--resume', sessionId, '-p', 'Say it again.', ...AGENT_FLAGS], {
            cwd: work,
            env: agentEnv(home, relay.url),
          });
          const requests = seen.slice(before);
          pending -= requests.filter((request) => request.status === 200).length;
          const rules: string[] = repairs.slice(repairedBefore).flatMap((event) => event.rules);
          log(
            `   ${outcome.poisoning.name}: exit ${resumed.code}, emulator saw ${requests.map((request) => request.status).join(', ')}; repaired: ${rules.join(', ') || 'nothing'}; result: ${JSON.stringify(resumed.result?.result ?? resumed.stderr.slice(0, 200))}`,
          );
          expect(
            resumed.code === 0 && resumed.result?.result === RESUMED,
            `${outcome.poisoning.name}: through the sanitizing fetch the resume completes`,
          );
          expect(
            requests.length > 0 && requests.every((request) => request.status === 200),
            `${outcome.poisoning.name}: the emulator saw only valid requests`,
          );
          expect(
            rules.includes(outcome.poisoning.rule),
            `${outcome.poisoning.name}: the fetch repaired ${outcome.poisoning.rule}`,
          );
          await writeFile(file, original);
        }
      } finally {
        await relay.close();
      }

      log(
        '3a. the same poisonings, resumed with `unstuck run -- claude --resume` (ANTHROPIC_BASE_URL at the emulator: the upstream unstuck run keeps)',
      );
      for (const outcome of outcomes.filter((entry) => entry.sent && entry.rules.includes(entry.poisoning.rule))) {
        await writeFile(file, outcome.text);
        const before = seen.length;
        pending = answerPending(emulator, pending);
        const resumed = await agent(['--resume', sessionId, '-p', 'Say it again.', ...AGENT_FLAGS], {
          cwd: work,
          env,
          throughUnstuckRun: true,
        });
        const requests = seen.slice(before);
        pending -= requests.filter((request) => request.status === 200).length;
        const summary = resumed.stderr.split('\n').find((line) => line.startsWith('unstuck: repaired')) ?? '';
        log(
          `   ${outcome.poisoning.name}: exit ${resumed.code}, emulator saw ${requests.map((request) => request.status).join(', ')}; result: ${JSON.stringify(resumed.result?.result ?? resumed.stderr.slice(0, 200))}`,
        );
        log(`      stderr: ${summary || '(no summary line)'}`);
        expect(
          resumed.code === 0 && resumed.result?.result === RESUMED,
          `${outcome.poisoning.name}: through unstuck run the resume completes, with Claude Code's exit code`,
        );
        expect(
          requests.length > 0 && requests.every((request) => request.status === 200),
          `${outcome.poisoning.name}: through unstuck run the emulator saw only valid requests`,
        );
        expect(
          summary.includes(outcome.poisoning.rule),
          `${outcome.poisoning.name}: unstuck run says, in one line after the run, that it repaired ${outcome.poisoning.rule}`,
        );
        await writeFile(file, original);
      }

      log('3b. the same poisonings, mended on disk by `unstuck fix --write`, resumed straight at the strict emulator');
      for (const outcome of outcomes.filter((entry) => entry.sent && entry.rules.includes(entry.poisoning.rule))) {
        await writeFile(file, outcome.text);
        const fixed = spawnSync(process.execPath, ['--import', 'tsx', unstuckCli, 'fix', '--write', file], {
          encoding: 'utf8',
        });
        const mended = await readFile(file, 'utf8');
        const poisonedLines = outcome.text.split('\n');
        const changedLines = mended.split('\n').filter((line) => !poisonedLines.includes(line)).length;
        log(`   ${outcome.poisoning.name}: unstuck fix exit ${fixed.status}, ${changedLines} line(s) rewritten`);
        for (const line of fixed.stderr.trim().split('\n')) log(`      ${line}`);
        expect(fixed.status === 0, `${outcome.poisoning.name}: unstuck fix --write repairs the session file`);
        const before = seen.length;
        pending = answerPending(emulator, pending);
        const resumed = await agent(['--resume', sessionId, '-p', 'Say it again.', ...AGENT_FLAGS], { cwd: work, env });
        const requests = seen.slice(before);
        pending -= requests.filter((request) => request.status === 200).length;
        log(
          `   resumed: exit ${resumed.code}, emulator saw ${requests.map((request) => request.status).join(', ')}; result: ${JSON.stringify(resumed.result?.result ?? resumed.stderr.slice(0, 200))}`,
        );
        expect(
          resumed.code === 0 && resumed.result?.result === RESUMED,
          `${outcome.poisoning.name}: after unstuck fix --write, the resume straight at the strict emulator completes`,
        );
        expect(
          requests.length > 0 && requests.every((request) => request.status === 200),
          `${outcome.poisoning.name}: after the fix the emulator saw only valid requests`,
        );
        await rm(`${file}.bak`, { force: true });
        await writeFile(file, original);
      }

      log('3c. the result event lost (a crash mid-tool): unstuck fix --write adds one, and Claude Code resumes on it');
      {
        // Drop the tool_result event and hang the event after it from the call, as a crash before the write would.
        const lines = original.split('\n');
        const index = lines.findIndex(
          (line) => line.includes('"type":"tool_result"') && line.includes('"type":"user"'),
        );
        const lost = JSON.parse(lines[index] as string) as { uuid: string; parentUuid: string };
        const rest = lines
          .filter((_, at) => at !== index)
          .map((line) => line.replace(`"parentUuid":"${lost.uuid}"`, `"parentUuid":"${lost.parentUuid}"`));
        await writeFile(file, rest.join('\n'));
        const fixed = spawnSync(process.execPath, ['--import', 'tsx', unstuckCli, 'fix', '--write', file], {
          encoding: 'utf8',
        });
        log(`   unstuck fix exit ${fixed.status}`);
        for (const line of fixed.stderr.trim().split('\n')) log(`      ${line}`);
        expect(fixed.status === 0, 'unstuck fix --write answers the call whose result was lost');
        const before = seen.length;
        pending = answerPending(emulator, pending);
        const resumed = await agent(['--resume', sessionId, '-p', 'Say it again.', ...AGENT_FLAGS], { cwd: work, env });
        const requests = seen.slice(before);
        pending -= requests.filter((request) => request.status === 200).length;
        log(
          `   resumed: exit ${resumed.code}, emulator saw ${requests.map((request) => request.status).join(', ')}; result: ${JSON.stringify(resumed.result?.result ?? resumed.stderr.slice(0, 200))}`,
        );
        expect(
          resumed.code === 0 && resumed.result?.result === RESUMED,
          'after the fix, the resume straight at the strict emulator completes',
        );
        expect(
          requests.some((request) => hasToolResult(request.body, 'did not complete')),
          "Claude Code sent the result event unstuck added (it reads the new event's shape)",
        );
        await rm(`${file}.bak`, { force: true });
        await writeFile(file, original);
      }

      log(
        '3d. the session cut after the call, an attachment hung from it, last-prompt naming it: unstuck fix --write, then claude --resume',
      );
      await resumeCutAtCall({
        log,
        expect,
        file,
        original,
        unstuck: [process.execPath, '--import', 'tsx', unstuckCli],
        seen,
        answer: RESUMED,
        resume: async () => {
          pending = answerPending(emulator, pending);
          const before = seen.length;
          const resumed = await agent(['--resume', sessionId, '-p', 'Say it again.', ...AGENT_FLAGS], {
            cwd: work,
            env,
          });
          pending -= seen.slice(before).filter((request) => request.status === 200).length;
          return { code: resumed.code, result: resumed.result?.result };
        },
      });

      log('4. parallel tool calls: two Reads in one answer, then text (a second session)');
      await writeFile(join(work, 'other.txt'), 'The other word is harbour.\n');
      const parallelId = '7f3c2a10-5b1e-4c8d-9a2f-0e6d4b8c1a02';
      const parallelBefore = seen.length;
      emulator.push(
        {
          text: 'Reading both files.',
          toolCalls: ['notes.txt', 'other.txt'].map((name) => ({
            name: 'Read',
            arguments: JSON.stringify({ file_path: join(work, name) }),
          })),
        },
        { text: 'lighthouse and harbour.' },
      );
      const parallel = await agent(
        ['-p', 'What do notes.txt and other.txt say?', '--session-id', parallelId, ...AGENT_FLAGS],
        { cwd: work, env },
      );
      log(
        `   exit ${parallel.code}; result: ${JSON.stringify(parallel.result?.result ?? parallel.stderr.slice(0, 300))}`,
      );
      const both = seen
        .slice(parallelBefore)
        .find(
          (request) =>
            request.status === 200 &&
            hasToolResult(request.body, 'lighthouse') &&
            hasToolResult(request.body, 'harbour'),
        );
      expect(
        parallel.code === 0 && parallel.result?.result === 'lighthouse and harbour.',
        'the parallel turn completes with the scripted text',
      );
      expect(both !== undefined, 'both results went back in one request');
      if (both !== undefined) log(`   the results' request: ${shapeOf(both.body)}`);
      const parallelFile = await findSession(home, parallelId);
      expect(parallelFile !== undefined, `Claude Code wrote ${parallelId}.jsonl`);

      if (saveFixtures) {
        await mkdir(fixtures, { recursive: true });
        if (parallelFile !== undefined)
          await writeFile(
            join(fixtures, `parallel-read.claude-code-${CLAUDE_CODE_VERSION}.jsonl`),
            await readFile(parallelFile, 'utf8'),
          );
        const name = `read-tool-loop.claude-code-${CLAUDE_CODE_VERSION}`;
        await writeFile(join(fixtures, `${name}.jsonl`), original);
        const reachedTheWire = outcomes.filter((outcome) => outcome.sent);
        for (const outcome of reachedTheWire)
          await writeFile(join(fixtures, `${name}.${outcome.poisoning.name}.jsonl`), outcome.text);
        log(
          `   saved ${name}.jsonl and the ${reachedTheWire.length} poisoning(s) Claude Code sends as they are under test/fixtures/agents/claude-code/`,
        );
      }
    } finally {
      await server.close();
    }
  } finally {
    if (process.env['UNSTUCK_E2E_KEEP'] === '1') log(`kept ${root}`);
    else await rm(root, { recursive: true, force: true });
  }
  failures.push(...(await runClaudeInteractive({ log })));
  return report(failures);
}

const RESUMED = 'Resumed.';

/** Pushes the resume's answer unless one is still pending from a resume whose requests were all rejected. */
function answerPending(emulator: ReturnType<typeof createEmulator>, pending: number): number {
  if (pending > 0) return pending;
  emulator.push({ text: RESUMED });
  return 1;
}

/** Only what a `-p` run needs: the Read tool, JSON output, no prompts for permission. */
const AGENT_FLAGS = [
  '--output-format',
  'json',
  '--tools',
  'Read',
  '--allowedTools',
  'Read',
  '--system-prompt',
  'You are a test agent. Use the Read tool when asked about a file.',
];

/** A fresh HOME, the emulator as the API, a dummy key, and everything that would phone home off. */
function agentEnv(home: string, baseUrl: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    HOME: home,
    LANG: 'C.UTF-8',
    ANTHROPIC_BASE_URL: baseUrl,
    ANTHROPIC_API_KEY: 'sk-ant-e2e-dummy',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    DISABLE_BUG_COMMAND: '1',
  };
}

interface AgentRun {
  code: number | null;
  result: { result?: string; is_error?: boolean; api_error_status?: number | null } | undefined;
  stderr: string;
}

/** Runs Claude Code, or with `throughUnstuckRun` `unstuck run -- claude …` (tsx by its absolute URL: the cwd is the agent's). */
function agent(
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; throughUnstuckRun?: boolean },
): Promise<AgentRun> {
  return new Promise((resolve) => {
    const [command, commandArgs] =
      options.throughUnstuckRun === true
        ? [process.execPath, ['--import', import.meta.resolve('tsx'), unstuckCli, 'run', '--', claude, ...args]]
        : [claude, args];
    const child = spawn(command, commandArgs, {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), 300_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      let result: AgentRun['result'];
      try {
        result = JSON.parse(stdout) as AgentRun['result'];
      } catch {
        result = undefined;
      }
      resolve({ code, result, stderr });
    });
  });
}

async function findSession(home: string, sessionId: string): Promise<string | undefined> {
  const projects = join(home, '.claude', 'projects');
  if (!existsSync(projects)) return undefined;
  for (const directory of await readdir(projects)) {
    const candidate = join(projects, directory, `${sessionId}.jsonl`);
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

function hasToolResult(body: any, text: string): boolean {
  return (
    Array.isArray(body?.messages) &&
    body.messages.some(
      (message: any) =>
        Array.isArray(message.content) &&
        message.content.some(
          (block: any) => block.type === 'tool_result' && JSON.stringify(block.content).includes(text),
        ),
    )
  );
}

/** The roles and block types of a request, no contents (`UNSTUCK_E2E_SHAPES=1`). */
function shapeOf(body: any): string {
  if (!Array.isArray(body?.messages)) return 'no messages';
  return body.messages
    .map(
      (message: any) =>
        `${message.role}[${Array.isArray(message.content) ? message.content.map((block: any) => (block.type === 'text' && block.text.trim() === '' ? 'text(blank)' : block.type)).join(',') : typeof message.content}]`,
    )
    .join(' ');
}

function run(command: string, args: string[]): string {
  return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
}

const AGENTS = ['claude-code', 'codex', 'gemini-cli', 'opencode', 'qwen-code', 'cline'] as const;

/** `--agent NAME` (repeatable, or `--agent=NAME`): only those agents; none given: all of them. */
function selectedAgents(): Set<string> {
  const names: string[] = [];
  process.argv.slice(2).forEach((argument, index, all) => {
    if (argument === '--agent' && all[index + 1] !== undefined) names.push(all[index + 1] as string);
    else if (argument.startsWith('--agent=')) names.push(argument.slice('--agent='.length));
  });
  for (const name of names)
    if (!(AGENTS as readonly string[]).includes(name))
      throw new Error(`unknown --agent '${name}' (known: ${AGENTS.join(', ')})`);
  return new Set(names.length === 0 ? AGENTS : names);
}

function report(failures: string[]): number {
  log(
    failures.length === 0
      ? 'e2e:agents: every expectation held'
      : `e2e:agents: ${failures.length} expectation(s) failed`,
  );
  return failures.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`e2e:agents: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(2);
  },
);
