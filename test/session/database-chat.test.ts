import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { check } from '../../src/core/index.js';
import { createEmulator } from '../../src/emulator/index.js';
import type { SessionStore } from '../../src/session/index.js';
import { createPostgresStore, createSqliteStore } from '../../src/session/index.js';
import { cleanEnv, runChatBinary } from '../chat/harness/run-chat-binary.js';
import type { PostgresServer } from '../support/postgres-server.js';
import { postgresSkipReason, startPostgres } from '../support/postgres-server.js';

/** `unstuck chat --store`: the real binary against the emulator, its sessions in SQLite and in PostgreSQL. */
const skipPostgres = postgresSkipReason();
let cwd: string;
let server: PostgresServer | undefined;

before(async () => {
  cwd = await mkdtemp(join(tmpdir(), 'unstuck-chat-store-'));
  if (skipPostgres === undefined) server = await startPostgres();
});
after(async () => {
  await server?.stop();
  await rm(cwd, { recursive: true, force: true });
});

async function twoTurns(
  store: string,
  env: Record<string, string>,
  open: (session: string) => SessionStore,
): Promise<void> {
  const emulator = createEmulator({
    profile: 'deepseek',
    script: [
      { toolCalls: [{ name: 'list_directory', arguments: '{}' }] },
      { text: 'An empty directory.' },
      { text: 'Still empty.' },
      { text: 'The newest one.' },
    ],
  });
  const listening = await emulator.listen();
  try {
    const base = ['chat', '--store', store, '--base-url', listening.url, '--profile', 'deepseek', '--json'];
    const first = await runChatBinary([...base, '-p', 'What is here?'], {
      cwd,
      env: cleanEnv({ OPENAI_API_KEY: 'sk-test', ...env }),
    });
    assert.equal(first.code, 0, first.stderr);
    const report = JSON.parse(first.stdout) as { status: string; answer: string; session: string };
    assert.equal(report.answer, 'An empty directory.');
    const second = await runChatBinary([...base, '--resume', report.session, '-p', 'And now?'], {
      cwd,
      env: cleanEnv({ OPENAI_API_KEY: 'sk-test', ...env }),
    });
    assert.equal(second.code, 0, second.stderr);
    assert.equal((JSON.parse(second.stdout) as { answer: string }).answer, 'Still empty.');
    // The second turn was sent the first one, read back from the database.
    const last = emulator.requests.at(-1)?.body as { messages: { role: string }[] };
    assert.deepEqual(
      last.messages.map((message) => message.role),
      ['system', 'user', 'assistant', 'tool', 'assistant', 'user'],
    );
    // --resume without an id: the session written last, found by listing the database.
    const newest = await runChatBinary([...base, '--resume', '-p', 'Which one?'], {
      cwd,
      env: cleanEnv({ OPENAI_API_KEY: 'sk-test', ...env }),
    });
    assert.equal(newest.code, 0, newest.stderr);
    assert.equal((JSON.parse(newest.stdout) as { session: string }).session, report.session);
    const stored = open(report.session);
    try {
      const loaded = await stored.load();
      assert.deepEqual(loaded.problems, []);
      assert.deepEqual(
        loaded.messages.map((message) => message.role),
        ['user', 'assistant', 'tool', 'assistant', 'user', 'assistant', 'user', 'assistant'],
      );
      assert.deepEqual(check(loaded.messages, { profile: 'deepseek', model: 'deepseek-chat' }), []);
    } finally {
      await stored.close();
    }
  } finally {
    await listening.close();
  }
}

describe('unstuck chat --store', () => {
  it('keeps its sessions in a SQLite file and resumes one from it (no session file is written)', async () => {
    await twoTurns('sqlite:chat.db', {}, (session) => createSqliteStore(join(cwd, 'chat.db'), { session }));
    assert.deepEqual(
      (await readdir(cwd)).filter((name) => !name.startsWith('chat.db')),
      [],
    );
  });

  it('keeps its sessions in PostgreSQL (password from PGPASSWORD) and resumes one from it', {
    skip: skipPostgres,
  }, async () => {
    await twoTurns(
      `postgres://${server!.user}@127.0.0.1:${server!.port}/postgres`,
      { PGPASSWORD: server!.password },
      (session) => createPostgresStore(server!.url, { session }),
    );
  });
});
