import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { Message } from '../../src/core/index.js';
import { check } from '../../src/core/index.js';
import type { SessionStore } from '../../src/session/index.js';
import { createPostgresStore, createSqliteStore } from '../../src/session/index.js';

/**
 * Several processes (standing in for nodes) run agent turns on the same few sessions through one
 * database for `durationMs`; then every session is loaded and checked: valid for the provider, every
 * acknowledged turn there exactly once, every turn's messages together (user, the tool call, its
 * result, the answer), and nothing of a turn that was not acknowledged. Shared by the test suite
 * (a short run) and bench/db-multi-node.ts (30 s).
 */
export interface MultiNodeReport {
  kind: 'sqlite' | 'postgres';
  nodes: number;
  sessions: number;
  durationMs: number;
  turns: number;
  refused: Record<string, number>;
  messages: number;
}

export async function multiNodeRun(options: {
  child: string;
  kind: 'sqlite' | 'postgres';
  target: string;
  nodes: number;
  sessions: number;
  durationMs: number;
  prefix: string;
}): Promise<MultiNodeReport> {
  const { child, kind, target, nodes, durationMs } = options;
  const sessions = Array.from({ length: options.sessions }, (_unused, index) => `${options.prefix}-${index}`);
  const outputs = await Promise.all(
    Array.from({ length: nodes }, (_unused, node) =>
      runNode(child, [kind, target, `n${node}`, sessions.join(','), String(durationMs), String(1000 + node)]),
    ),
  );
  const acknowledged = new Map<string, string>();
  const refused: Record<string, number> = {};
  for (const output of outputs) {
    for (const { session, turn } of output.acknowledged) acknowledged.set(turn, session);
    for (const [why, count] of Object.entries(output.refused)) refused[why] = (refused[why] ?? 0) + count;
  }
  assert.deepEqual(
    Object.keys(refused).filter((why) => why.startsWith('other')),
    [],
    `turns failed for other reasons: ${JSON.stringify(refused)}`,
  );
  assert.ok(acknowledged.size > 0, `no turn was acknowledged at all: ${JSON.stringify(refused)}`);
  let messages = 0;
  for (const session of sessions) {
    const store: SessionStore =
      kind === 'sqlite' ? createSqliteStore(target, { session }) : createPostgresStore(target, { session });
    try {
      const loaded = await store.load();
      assert.deepEqual(loaded.problems, [], `${session}: loads without problems`);
      assert.deepEqual(
        check(loaded.messages, { profile: 'deepseek', model: 'deepseek-chat' }),
        [],
        `${session}: valid for the provider`,
      );
      const turns = turnsOf(loaded.messages, session);
      for (const turn of turns)
        assert.equal(
          acknowledged.get(turn),
          session,
          `${session}: turn ${turn} is there but was not acknowledged on this session`,
        );
      const expected = [...acknowledged]
        .filter(([, where]) => where === session)
        .map(([turn]) => turn)
        .sort();
      assert.ok(expected.length > 0, `${session}: no turn landed on it`);
      assert.deepEqual([...turns].sort(), expected, `${session}: every acknowledged turn exactly once`);
      messages += loaded.messages.length;
    } finally {
      await store.close();
    }
  }
  return { kind, nodes, sessions: sessions.length, durationMs, turns: acknowledged.size, refused, messages };
}

/** The turns of a session in order; fails unless each is its four messages, together. */
function turnsOf(messages: readonly Message[], session: string): string[] {
  const turns: string[] = [];
  for (let index = 0; index < messages.length; index += 4) {
    const [user, call, result, answer] = messages.slice(index, index + 4);
    const turn = /^turn (\S+)$/.exec(typeof user?.content === 'string' ? user.content : '')?.[1];
    const where = `${session} message ${index}`;
    assert.ok(
      user?.role === 'user' && turn !== undefined,
      `${where}: a turn starts with its user message (${JSON.stringify(user)})`,
    );
    assert.ok(
      call?.role === 'assistant' && call.tool_calls?.[0]?.id === `call_${turn}` && call.tool_calls.length === 1,
      `${where}: turn ${turn}'s tool call follows it (${JSON.stringify(call)})`,
    );
    assert.ok(
      result?.role === 'tool' && result.tool_call_id === `call_${turn}` && result.content === `echo ${turn}`,
      `${where}: turn ${turn}'s result follows (${JSON.stringify(result)})`,
    );
    assert.ok(
      answer?.role === 'assistant' && answer.content === `done ${turn}`,
      `${where}: turn ${turn}'s answer ends it (${JSON.stringify(answer)})`,
    );
    turns.push(turn);
  }
  assert.equal(new Set(turns).size, turns.length, `${session}: no turn twice`);
  return turns;
}

async function runNode(
  child: string,
  args: string[],
): Promise<{ acknowledged: { session: string; turn: string }[]; refused: Record<string, number> }> {
  const node = spawn(process.execPath, [child, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let errors = '';
  node.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  node.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  const code = await new Promise<number | null>((resolve, reject) => {
    node.on('close', resolve);
    node.on('error', reject);
  });
  assert.equal(code, 0, `node ${args[2]} ended with ${code}: ${errors.slice(0, 1500)}`);
  return JSON.parse(output) as { acknowledged: { session: string; turn: string }[]; refused: Record<string, number> };
}
