/**
 * One "node" of the multi-node run: until the deadline, it picks one of the sessions, opens it
 * through its own store (SQLite file or PostgreSQL), runs one agent turn against its own emulator
 * (a tool call, its result, an answer, all tagged with the turn's name) and closes the store. A
 * turn that another node's write got in the way of (SESSION_CONFLICT, SESSION_LOCKED) is not
 * acknowledged; it is tried again with a new name. Prints one JSON line at the end.
 *
 *   database-node-child KIND(sqlite|postgres) TARGET NODE SESSIONS DURATION_MS SEED
 */

import type { AgentEvent, Tool } from '../../src/agent/index.js';
import { createAgent } from '../../src/agent/index.js';
import { createEmulator } from '../../src/emulator/index.js';
import type { SessionStore } from '../../src/session/index.js';
import { createPostgresStore, createSqliteStore } from '../../src/session/index.js';
import { seededRandom } from '../support/random.js';

const [kind, target, node, sessionList, duration, seed] = process.argv.slice(2);
if (
  kind === undefined ||
  target === undefined ||
  node === undefined ||
  sessionList === undefined ||
  duration === undefined ||
  seed === undefined
) {
  throw new Error('usage: database-node-child KIND TARGET NODE SESSIONS DURATION_MS SEED');
}
const sessions = sessionList.split(',');
const random = seededRandom(Number(seed));
const echo: Tool = {
  name: 'echo',
  description: 'Says its text back.',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  run: async (args) => `echo ${(args as { text: string }).text}`,
};
const acknowledged: { session: string; turn: string }[] = [];
const refused: Record<string, number> = {};
const deadline = Date.now() + Number(duration);

function open(session: string): SessionStore {
  const options = { session, lockTimeoutMs: 2000 };
  return kind === 'sqlite' ? createSqliteStore(target!, options) : createPostgresStore(target!, options);
}

let number = 0;
while (Date.now() < deadline) {
  const session = sessions[Math.floor(random() * sessions.length)]!;
  const turn = `${node}.${++number}`;
  // An emulator per turn: a turn refused before its first request leaves no steps to the next one.
  const emulator = createEmulator({ profile: 'deepseek' });
  emulator.push(
    { toolCalls: [{ id: `call_${turn}`, name: 'echo', arguments: JSON.stringify({ text: turn }) }] },
    { text: `done ${turn}` },
  );
  const store = open(session);
  const agent = createAgent({
    baseURL: 'http://emulator.test/v1',
    apiKey: 'sk-test',
    model: 'deepseek-chat',
    profile: 'deepseek',
    fetch: emulator.fetch,
    tools: [echo],
    session: store,
    retry: { maxRetries: 0 },
  });
  let ended: AgentEvent | undefined;
  let error = '';
  try {
    await agent.open();
    for await (const event of agent.runTurn(`turn ${turn}`)) {
      if (event.type === 'error') error = event.message;
      if (event.type === 'turn-end') ended = event;
    }
  } catch (failure) {
    error = (failure as Error).message;
  } finally {
    await store.close().catch(() => undefined);
  }
  if (ended?.type === 'turn-end' && ended.reason === 'stop' && error === '') {
    acknowledged.push({ session, turn });
  } else {
    const why = /written by another writer/.test(error)
      ? 'conflict'
      : /is being written by/.test(error)
        ? 'locked'
        : `other: ${error}`;
    refused[why] = (refused[why] ?? 0) + 1;
  }
}
process.stdout.write(`${JSON.stringify({ node, acknowledged, refused })}\n`);
