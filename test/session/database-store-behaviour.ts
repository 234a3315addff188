import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';
import { isUnstuckError } from '../../src/core/errors.js';
import type { Message } from '../../src/core/messages.js';
import type { DatabaseStoreOptions, SessionStore } from '../../src/session/index.js';
import { asJson, toolLoopSession } from './helpers.js';

/**
 * What the SQLite and PostgreSQL stores promise beyond the SessionStore contract: two writers
 * never interleave, a dead writer's lease does not hold the session, a step writes only its own
 * rows, damage is reported and bad input fails with a typed error. `fixture` reaches into the
 * database the way an operator (or a bug) would.
 */
export interface DatabaseFixture {
  open(session: string, options?: DatabaseStoreOptions): SessionStore;
  /** Overwrites the stored JSON of one message row. */
  setBody(session: string, position: number, body: string): Promise<void>;
  /** Gives the session's lease to `holder` for `ms` from now. */
  setLease(session: string, holder: string, ms: number): Promise<void>;
  /** Records a schema version as if a newer unstuck had migrated the database. */
  addSchemaVersion(version: number): Promise<void>;
  removeSchemaVersion(version: number): Promise<void>;
  /** The message rows of a session, in order. */
  rows(session: string): Promise<string[]>;
  /** The arguments of database-crash-child.ts after MODE: KIND TARGET (then SESSION FIRST). */
  childTarget: [kind: 'sqlite' | 'postgres', target: string];
}

const expectCode = (code: string) => (error: unknown) => isUnstuckError(error) && error.code === code;

export function databaseStoreBehaviour(name: string, fixture: () => DatabaseFixture, childScript: () => string): void {
  describe(`${name} store: writers, leases, damage`, () => {
    let next = 0;
    const sessionName = (what: string) => `${what}-${process.pid}-${++next}`;

    it('a writer that loaded before another wrote fails with SESSION_CONFLICT and writes nothing; after a new load it goes on', async () => {
      const session = sessionName('conflict');
      const first = fixture().open(session);
      const second = fixture().open(session);
      try {
        await first.save(toolLoopSession(1));
        await first.close();
        await second.load();
        const third = fixture().open(session);
        await third.load();
        await third.append!([{ role: 'user', content: 'from the third node' }]);
        await third.close();
        await assert.rejects(
          second.append!([{ role: 'user', content: 'from a stale node' }]),
          expectCode('SESSION_CONFLICT'),
        );
        await assert.rejects(second.save([{ role: 'user', content: 'stale rewrite' }]), expectCode('SESSION_CONFLICT'));
        const loaded = await second.load();
        assert.deepEqual(loaded.messages.at(-1), { role: 'user', content: 'from the third node' });
        assert.equal(loaded.messages.length, toolLoopSession(1).length + 1);
        await second.append!([{ role: 'user', content: 'after loading again' }]);
        assert.deepEqual((await fixture().open(session).load()).messages.at(-1), {
          role: 'user',
          content: 'after loading again',
        });
      } finally {
        await first.close();
        await second.close();
      }
    });

    it('a live writer holds the session: another waits, fails with SESSION_LOCKED, and gets in once the first closes', async () => {
      const session = sessionName('lease');
      const holder = fixture().open(session, { leaseMs: 300 });
      const other = fixture().open(session, { lockTimeoutMs: 500 });
      try {
        await holder.load();
        await holder.append!([{ role: 'user', content: 'one' }]);
        await other.load();
        const started = Date.now();
        // The holder renews its lease while it is open: 500 ms is longer than the 300 ms lease.
        await assert.rejects(other.append!([{ role: 'user', content: 'two' }]), expectCode('SESSION_LOCKED'));
        assert.ok(Date.now() - started >= 450, 'waited for the lock');
        await holder.close();
        await other.append!([{ role: 'user', content: 'two' }]);
        assert.deepEqual((await other.load()).messages, [
          { role: 'user', content: 'one' },
          { role: 'user', content: 'two' },
        ]);
      } finally {
        await holder.close();
        await other.close();
      }
    });

    it('a holder on another host that stopped renewing blocks the session no longer than its lease', async () => {
      const session = sessionName('expired');
      const store = fixture().open(session, { lockTimeoutMs: 5000 });
      try {
        await store.append!([{ role: 'user', content: 'first' }]);
        await store.close();
        await fixture().setLease(session, 'another-host/4242/abc', 400);
        const started = Date.now();
        await store.load();
        await store.append!([{ role: 'user', content: 'after the lease' }]);
        const waited = Date.now() - started;
        assert.ok(waited >= 300 && waited < 2500, `waited ${waited} ms for a 400 ms lease`);
      } finally {
        await store.close();
      }
    });

    it('a writer killed while it holds the lease does not block the next one (its process is gone)', async () => {
      const session = sessionName('killed');
      const child = spawn(process.execPath, [childScript(), 'append', ...fixture().childTarget, session, '0'], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let errors = '';
      child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', () => resolve());
        child.on('close', (code) => reject(new Error(`the child ended (${code}) before it wrote: ${errors}`)));
      });
      child.kill('SIGKILL');
      await new Promise((resolve) => child.on('close', resolve));
      const store = fixture().open(session, { leaseMs: 60_000, lockTimeoutMs: 1000 });
      try {
        const started = Date.now();
        await store.load();
        await store.append!([{ role: 'user', content: 'next writer' }]);
        assert.ok(Date.now() - started < 900, "took the dead writer's lease at once");
        assert.equal((await store.load()).messages.at(-1)?.content, 'next writer');
      } finally {
        await store.close();
      }
    });

    it('an append writes only its own rows, and a save only the rows from the first change on', async () => {
      const session = sessionName('incremental');
      const store = fixture().open(session);
      const database = fixture();
      try {
        const messages = toolLoopSession(50);
        await store.save(messages);
        // Rows written behind the store's back stay as they are while the store writes after them.
        const marker = JSON.stringify({ role: 'user', content: 'changed in the database' });
        await database.setBody(session, 0, marker);
        await store.append!([{ role: 'user', content: 'a step' }]);
        await store.save([...messages, { role: 'user', content: 'a step' }, { role: 'assistant', content: 'more' }]);
        await store.save([...messages.slice(0, 100), { role: 'assistant', content: 'trimmed' }]);
        const rows = await database.rows(session);
        assert.equal(rows[0], marker);
        assert.equal(rows.length, 101);
        assert.deepEqual(
          rows.slice(1).map((row) => JSON.parse(row) as Message),
          asJson([...messages.slice(1, 100), { role: 'assistant', content: 'trimmed' }]),
        );
      } finally {
        await store.close();
      }
    });

    it('a save of a history that fails check says so (checkSaves), and saves it all the same', async () => {
      const session = sessionName('checked');
      const reported: string[][] = [];
      const store = fixture().open(session, {
        checkSaves: {
          options: { profile: 'deepseek' },
          onInvalid: (violations) =>
            reported.push(violations.map((violation) => `${violation.rule}@${violation.index}`)),
        },
      });
      try {
        const valid = toolLoopSession(1);
        await store.save(valid);
        assert.equal(reported.length, 0);
        const unanswered: Message[] = [
          ...valid,
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'call_open', type: 'function', function: { name: 'f', arguments: '{}' } }],
          },
          { role: 'user', content: 'next' },
        ];
        await store.save(unanswered);
        assert.equal(reported.length, 1);
        assert.match(reported[0]!.join(' '), /@5/);
        assert.deepEqual((await store.load()).messages, asJson(unanswered));
      } finally {
        await store.close();
      }
    });

    it('a row that does not decode is listed with its position; every other message loads, and the next save rewrites it', async () => {
      const session = sessionName('damaged');
      const store = fixture().open(session);
      try {
        const messages = toolLoopSession(3);
        await store.save(messages);
        await fixture().setBody(session, 4, '{"role":"assistant","content":"cut');
        await fixture().setBody(session, 6, '[1,2]');
        const loaded = await store.load();
        assert.equal(loaded.problems.length, 2);
        assert.match(loaded.problems[0]!.why, /position 4 does not decode \(not JSON/);
        assert.match(loaded.problems[1]!.why, /position 6 does not decode \(not a message/);
        assert.deepEqual(loaded.messages, asJson(messages.filter((_message, index) => index !== 4 && index !== 6)));
        await store.save(loaded.messages);
        assert.deepEqual(await store.load(), { messages: loaded.messages, problems: [] });
      } finally {
        await store.close();
      }
    });

    it('a database whose schema is newer than this version is refused with SESSION_SCHEMA, and left as it was', async () => {
      const session = sessionName('schema');
      const seeded = fixture().open(session);
      await seeded.save([{ role: 'user', content: 'kept' }]);
      await seeded.close();
      await fixture().addSchemaVersion(99);
      try {
        const store = fixture().open(session);
        await assert.rejects(
          store.load(),
          (error: unknown) =>
            expectCode('SESSION_SCHEMA')(error) &&
            /version 99, newer than this unstuck knows \(1\)/.test((error as Error).message),
        );
        await assert.rejects(store.append!([{ role: 'user', content: 'lost?' }]), expectCode('SESSION_SCHEMA'));
        await store.close();
      } finally {
        await fixture().removeSchemaVersion(99);
      }
      assert.deepEqual(await fixture().rows(session), [JSON.stringify({ role: 'user', content: 'kept' })]);
    });
  });
}
