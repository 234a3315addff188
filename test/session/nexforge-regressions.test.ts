import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { check } from '../../src/core/check.js';
import type { Message } from '../../src/core/messages.js';
import { isHealableRule } from '../../src/core/rule-ids.js';
import type { SessionStore } from '../../src/session/index.js';
import { createJournalStore, createTranscriptStore } from '../../src/session/index.js';
import {
  asJson,
  DUMPED_SESSION,
  DUMPED_WITH_LINE_NUMBERS,
  GHOST_MARKER,
  temporaryDirectory,
  toolLoopSession,
  toolResultsAdjacent,
} from './helpers.js';

/**
 * The failures NexForgeCLI 0.4.1 (a terminal agent for DeepSeek, `nexforge-cli` on PyPI) records
 * in the README and docs/decisions/README.md of its sdist, one test each. The stale-segment one
 * ("3 messages loaded as 130") is in transcript-store.test.ts.
 */

/** The shape of NexForgeCLI's session-122357 at idx 1724: an assistant with several tool calls whose results dumped a session file. */
function dumpedSessionHistory(): Message[] {
  const calls = ['call_00_a', 'call_01_b', 'call_02_c', 'call_03_d'] as const;
  const history: Message[] = [
    ...toolLoopSession(2),
    { role: 'user', content: 'Why does the old session not open?' },
    {
      role: 'assistant',
      content: '',
      reasoning_content: 'Read the session file in several ways.',
      tool_calls: calls.map((id) => ({
        id,
        type: 'function',
        function: { name: 'read_file', arguments: '{"path":".nexforge/sessions/session-122357.md"}' },
      })),
    },
    { role: 'tool', tool_call_id: calls[0], content: DUMPED_WITH_LINE_NUMBERS },
    { role: 'tool', tool_call_id: calls[1], content: DUMPED_SESSION },
    { role: 'tool', tool_call_id: calls[2], content: `${GHOST_MARKER}\n${GHOST_MARKER}\n${GHOST_MARKER}` },
    { role: 'tool', tool_call_id: calls[3], content: `\`\`\`\n${GHOST_MARKER}\n\`\`\`` },
    { role: 'assistant', content: 'The file is fine.', reasoning_content: 'done' },
  ];
  return asJson(history);
}

function pairingViolations(messages: Message[]) {
  return check(messages, { profile: 'deepseek' }).filter((violation) => isHealableRule(violation.rule));
}

async function withStores(
  body: (store: SessionStore, reopen: () => SessionStore, kind: string) => Promise<void>,
): Promise<void> {
  for (const [kind, file] of [
    ['transcript', 'session.md'],
    ['journal', 'session.jsonl'],
  ] as const) {
    const directory = await temporaryDirectory();
    const path = join(directory.path, file);
    const reopen = () => (kind === 'transcript' ? createTranscriptStore(path) : createJournalStore(path));
    const store = reopen();
    try {
      await body(store, reopen, kind);
    } finally {
      await store.close();
      await directory.dispose();
    }
  }
}

describe('NexForgeCLI regressions', () => {
  it('a tool result that dumped a session file adds no ghost messages between the tool calls and their results', async () => {
    const history = dumpedSessionHistory();
    assert.deepEqual(pairingViolations(history), []);
    await withStores(async (store, reopen, kind) => {
      await store.save(history);
      const loaded = await reopen().load();
      assert.equal(loaded.messages.length, history.length, kind);
      assert.deepEqual(loaded, { messages: history, problems: [] }, kind);
      assert.ok(toolResultsAdjacent(loaded.messages), kind);
      assert.deepEqual(pairingViolations(loaded.messages), [], kind);
    });
  });

  it('a file written before the fix (dump unescaped, with line numbers) loads without ghosts', async () => {
    // NexForgeCLI's own format: no header, a marker line after each message, content not escaped.
    const history = dumpedSessionHistory();
    const marker = (message: Message) => `<!-- nf-msg ${Buffer.from(JSON.stringify(message)).toString('base64')} -->`;
    const text = history
      .map(
        (message) =>
          `### ${message.role}\n\n${typeof message.content === 'string' ? message.content : ''}\n${marker(message)}\n`,
      )
      .join('\n');
    // The dumped whole-line markers of calls[1] and calls[2] are exactly what 0.4.1 could not tell apart.
    const withoutUnprefixedDumps = text
      .split(DUMPED_SESSION)
      .join('(dump)')
      .split(`${GHOST_MARKER}\n${GHOST_MARKER}\n${GHOST_MARKER}`)
      .join('(markers)');
    const directory = await temporaryDirectory();
    try {
      const path = join(directory.path, 'session-122357.md');
      await writeFile(path, withoutUnprefixedDumps);
      const loaded = await createTranscriptStore(path).load();
      assert.deepEqual(loaded.problems, []);
      assert.equal(loaded.messages.length, history.length);
      assert.deepEqual(loaded.messages, history);
      assert.deepEqual(pairingViolations(loaded.messages), []);
    } finally {
      await directory.dispose();
    }
  });

  it('a failed turn keeps the user message: what was appended before the request failed is there after a restart', async () => {
    await withStores(async (store, reopen, kind) => {
      const before = toolLoopSession(2);
      await store.save(before);
      const typed: Message = { role: 'user', content: 'please continue' };
      // The agent records the user message, then the request fails (a 400, a timeout): nothing else is written.
      if (store.append !== undefined) await store.append([typed]);
      else await store.save([...before, typed]);
      await store.close();
      const loaded = await reopen().load();
      assert.deepEqual(loaded, { messages: asJson([...before, typed]), problems: [] }, kind);
    });
  });
});
