import assert from 'node:assert/strict';
import type { Agent, AgentEvent, AgentOptions } from '../../src/agent/index.js';
import { createAgent } from '../../src/agent/index.js';
import type { Message, ProfileName } from '../../src/core/index.js';
import { check } from '../../src/core/index.js';
import type { Emulator } from '../../src/emulator/index.js';
import type { SessionStore } from '../../src/session/index.js';
import { createMemoryStore } from '../../src/session/index.js';

/** An agent wired in-process to the emulator, with retry pauses that cost nothing. */
export function agentFor(emulator: Emulator, options: Partial<AgentOptions> = {}): Agent {
  return createAgent({
    baseURL: 'http://emulator.test/v1',
    apiKey: 'sk-test',
    model: 'deepseek-chat',
    profile: 'deepseek',
    fetch: emulator.fetch,
    retry: { baseDelayMs: 1, maxDelayMs: 4 },
    sleep: async () => undefined,
    idleTimeoutMs: 2_000,
    ...options,
  });
}

export async function collect(
  events: AsyncIterable<AgentEvent>,
  onEvent?: (event: AgentEvent) => unknown,
): Promise<AgentEvent[]> {
  const seen: AgentEvent[] = [];
  for await (const event of events) {
    seen.push(event);
    if (onEvent?.(event) === true) break;
  }
  return seen;
}

export function lastEvent(events: readonly AgentEvent[]): AgentEvent | undefined {
  return events[events.length - 1];
}

/** A memory store that remembers every state it was left in: what a kill at that moment would leave. */
export function recordingStore(
  initial: Message[] = [],
): SessionStore & { snapshots: Message[][]; current(): Promise<Message[]> } {
  const inner = createMemoryStore(initial);
  const snapshots: Message[][] = [];
  const snap = async (): Promise<void> => {
    snapshots.push((await inner.load()).messages);
  };
  return {
    snapshots,
    load: () => inner.load(),
    save: async (messages) => {
      await inner.save(messages);
      await snap();
    },
    append: async (messages) => {
      await inner.append!(messages);
      await snap();
    },
    close: () => inner.close(),
    current: async () => (await inner.load()).messages,
  };
}

/** Every request the emulator got passed the core's check (it answers invalid ones with a 400). */
export function assertEveryRequestValid(emulator: Emulator): void {
  for (const [index, request] of emulator.requests.entries()) {
    assert.deepEqual(request.violations, [], `request ${index} was invalid: ${JSON.stringify(request.violations)}`);
    const last = request.body?.messages?.at(-1);
    assert.ok(
      last === undefined || last.role !== 'assistant' || last.prefix === true,
      `request ${index} ends with an assistant message`,
    );
  }
}

export function assertValidHistory(
  messages: readonly Message[],
  profile: ProfileName = 'deepseek',
  options: { model?: string; thinking?: boolean } = {},
): void {
  const violations = check(messages, { profile, model: 'deepseek-chat', ...options });
  assert.deepEqual(violations, [], `history invalid: ${JSON.stringify(violations.slice(0, 3))}`);
}

export function userTexts(messages: readonly Message[]): string[] {
  return messages.filter((message) => message.role === 'user').map((message) => String(message.content));
}

export const echoTool = {
  name: 'echo',
  description: 'Echoes its text',
  parameters: { type: 'object', properties: { text: { type: 'string' } } },
  run: async (args: unknown) => `echo: ${(args as { text?: string }).text ?? ''}`,
};
