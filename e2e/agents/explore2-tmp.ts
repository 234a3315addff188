import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEmulator } from '../../src/emulator/index.js';

const root = process.env.ROOT ?? (await mkdtemp(join(tmpdir(), 'unstuck-e2e-gemini-')));
const home = join(root, 'home');
const work = join(root, 'work');
await mkdir(join(home, '.gemini'), { recursive: true });
await mkdir(work, { recursive: true });
await writeFile(join(work, 'notes.txt'), 'The secret word is lighthouse.\n');
const emulator = createEmulator({
  wires: ['gemini'],
  onRequest: (r) => {
    console.log('emu', r.path, r.status, r.violations[0]?.rule ?? '', r.violations[0]?.message ?? '');
    if (process.env.SHOW)
      console.log(
        JSON.stringify(
          r.body?.contents?.map((c: any) => ({
            role: c.role,
            parts: c.parts.map((p: any) => Object.keys(p).join('+') + (p.text ? ':' + p.text.slice(0, 60) : '')),
          })),
        ),
      );
  },
});
const server = await emulator.listen({ host: '127.0.0.1' });
await writeFile(
  join(home, '.gemini', 'settings.json'),
  JSON.stringify({
    security: { auth: { selectedType: 'gemini-api-key' } },
    general: { disableAutoUpdate: true, disableUpdateNag: true },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
  }),
);
emulator.push(
  { toolCalls: [{ name: 'read_file', arguments: JSON.stringify({ file_path: join(work, 'notes.txt') }) }] },
  { text: 'The file says lighthouse.' },
);
const args = process.argv.slice(2).length
  ? process.argv.slice(2)
  : ['-p', 'What does notes.txt say?', '--yolo', '--output-format', 'json', '-m', 'gemini-2.5-pro'];
const child = spawn(join(import.meta.dirname, 'node_modules/.bin/gemini'), args, {
  cwd: work,
  env: {
    PATH: process.env.PATH,
    HOME: home,
    GEMINI_API_KEY: 'e2e-dummy-key',
    GOOGLE_GEMINI_BASE_URL: server.url,
    GEMINI_CLI_TRUST_WORKSPACE: 'true',
    LANG: 'C.UTF-8',
    NO_COLOR: '1',
  },
  stdio: ['ignore', 'pipe', 'pipe'],
});
let out = '',
  err = '';
child.stdout.on('data', (c) => (out += c));
child.stderr.on('data', (c) => (err += c));
const timer = setTimeout(() => child.kill('SIGKILL'), 150000);
const code = await new Promise((r) => child.on('close', r));
clearTimeout(timer);
console.log('exit', code, '\nSTDOUT', out.slice(0, 1500), '\nSTDERR', err.slice(-2500));
console.log(root);
await server.close();
