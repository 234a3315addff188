import { writeFile } from 'node:fs/promises';
import type { EmulatedRequest, Emulator } from '../../src/emulator/index.js';
import { listenOn } from '../../src/emulator/listen.js';
import type { RepairEvent } from '../../src/http/index.js';
import { createSanitizingFetch } from '../../src/http/index.js';
import { relayThrough } from './sanitizing-relay.js';

/**
 * The half of an agent's e2e run that every agent shares: poison its saved session in several
 * shapes, resume each straight at the strict emulator (does the agent mend it, or does the
 * provider's 400 come back?), then resume the ones that got the 400 through a base URL in front
 * of the emulator (today a loopback relay through `createSanitizingFetch`; `unstuck proxy` once
 * it serves these wires: one more `resumeThrough` call with its URL).
 */

export interface AgentRunOptions {
  log: (line: string) => void;
  saveFixtures: boolean;
  /**
   * Starts something that repairs (the multi-wire `unstuck proxy`) in front of the emulator at
   * `upstream` and gives its base URL: the resumes that got the 400 are then resumed once more
   * through it and must complete with the emulator seeing only valid requests. Absent: that step
   * is skipped (the sanitizing fetch's relay step always runs).
   */
  proxy?: (upstream: string) => Promise<{ url: string; label: string; close(): Promise<void> }>;
}

export interface SessionPoisoning {
  name: string;
  /** The rule the strict emulator rejects the resumed request with when the agent sends it as it is. */
  rule: string;
  what: string;
  /** Whether a request body still carries the poisoned construct ("mended" is seen on the wire, not inferred from a 200). */
  sent(body: any): boolean;
  /** The poisoned file and the 1-based numbers of the lines changed or added (every other line byte for byte). */
  apply(text: string): { text: string; lines: number[] };
}

export interface Resumed {
  code: number | null;
  /** The agent's final answer, when it printed one. */
  text: string | undefined;
  /** A short excerpt of what it said on failure (stderr tail): never a key. */
  said: string;
  seconds: number;
}

export interface Outcome {
  poisoning: SessionPoisoning;
  resumed: Resumed;
  /** The rules of the emulator's 400s during the resume. */
  rules: string[];
  /** Whether the poisoned construct reached the wire. */
  sent: boolean;
  /** The poisoned file. */
  text: string;
}

export interface Harness {
  log(line: string): void;
  expect(ok: boolean, what: string): void;
  emulator: Emulator;
  /** Every request the emulator answered, in order. */
  seen: EmulatedRequest[];
  /** The session file the agent resumes from, and its content as the agent wrote it. */
  file: string;
  original: string;
  /** Resumes the session with the agent's base URL at `baseUrl`. */
  resume(baseUrl: string): Promise<Resumed>;
  /** The text the emulator answers a resume with. */
  answer: string;
  /** Which of the emulator's paths use up a script step (the agent's generate path). */
  isGenerate(request: EmulatedRequest): boolean;
}

/** One resume's answer kept pending: a rejected request does not use up its step. */
export function createPending(harness: Harness): { ensure(): void; settle(requests: EmulatedRequest[]): void } {
  let pending = 0;
  return {
    ensure() {
      if (pending > 0) return;
      harness.emulator.push({ text: harness.answer });
      pending = 1;
    },
    settle(requests) {
      pending -= requests.filter((request) => request.status === 200 && harness.isGenerate(request)).length;
      if (pending < 0) pending = 0;
    },
  };
}

/** Each poisoning, resumed straight at `baseUrl` (the strict emulator); the session file is restored after each. */
export async function resumePoisoned(
  harness: Harness,
  poisonings: readonly SessionPoisoning[],
  baseUrl: string,
  pending = createPending(harness),
): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  for (const poisoning of poisonings) {
    const poisoned = poisoning.apply(harness.original);
    await writeFile(harness.file, poisoned.text);
    const before = harness.seen.length;
    pending.ensure();
    const resumed = await harness.resume(baseUrl);
    const requests = harness.seen.slice(before);
    pending.settle(requests);
    const rules: string[] = requests
      .filter((request) => request.status === 400)
      .flatMap((request) => request.violations.map((violation) => violation.rule));
    const sent = requests.some((request) => poisoning.sent(request.body));
    outcomes.push({ poisoning, resumed, rules, sent, text: poisoned.text });
    const verdict = !sent
      ? rules.length === 0
        ? 'mended by the agent (the construct never reached the wire)'
        : `the construct mended by the agent (never reached the wire), but the resume still got the 400 (${[...new Set(rules)].join(', ')})`
      : rules.includes(poisoning.rule)
        ? `sent as is: the 400 (${poisoning.rule})`
        : `sent as is, and the strict emulator did not reject it (${poisoning.rule} not detected)`;
    harness.log(
      `   ${poisoning.name} (lines ${poisoned.lines.join(', ')}): exit ${resumed.code}, ${requests.length} requests in ${resumed.seconds.toFixed(1)} s, 400s: ${[...new Set(rules)].join(', ') || 'none'} -> ${verdict}`,
    );
    harness.log(`      ${JSON.stringify(resumed.text ?? resumed.said)}`);
    await writeFile(harness.file, harness.original);
  }
  return outcomes;
}

/**
 * The outcomes whose resume got a 400 (the poisoned construct, or something else the agent sent
 * along with it), resumed again with the agent pointed at
 * `baseUrl` (something in front of the emulator that repairs): each resume must complete with the
 * scripted answer and the emulator must see only valid requests.
 */
export async function resumeThrough(
  harness: Harness,
  outcomes: readonly Outcome[],
  baseUrl: string,
  label: string,
  pending = createPending(harness),
): Promise<void> {
  for (const outcome of outcomes.filter((entry) => entry.rules.length > 0)) {
    await writeFile(harness.file, outcome.text);
    const before = harness.seen.length;
    pending.ensure();
    const resumed = await harness.resume(baseUrl);
    const requests = harness.seen.slice(before);
    pending.settle(requests);
    harness.log(
      `   ${outcome.poisoning.name} through ${label}: exit ${resumed.code}, the emulator saw ${requests.map((request) => request.status).join(', ') || 'nothing'}; answer ${JSON.stringify(resumed.text ?? resumed.said)}`,
    );
    harness.expect(
      resumed.code === 0 && resumed.text === harness.answer,
      `${outcome.poisoning.name}: through ${label} the resume completes`,
    );
    harness.expect(
      requests.length > 0 && requests.every((request) => request.status === 200),
      `${outcome.poisoning.name}: through ${label} the emulator saw only valid requests`,
    );
    await writeFile(harness.file, harness.original);
  }
}

/**
 * The resumes that got the 400, again through each repairer in front of the emulator at `upstream`:
 * the sanitizing fetch (a loopback relay), then, when given, the real `unstuck proxy` process.
 */
export async function resumeThroughRepairers(
  harness: Harness,
  outcomes: readonly Outcome[],
  upstream: string,
  pending: ReturnType<typeof createPending>,
  steps: { fetch: string; proxy?: string },
  proxy: AgentRunOptions['proxy'],
): Promise<void> {
  harness.log(steps.fetch);
  const repairs: RepairEvent[] = [];
  const relay = await listenOn(
    relayThrough(createSanitizingFetch({ onRepair: (event) => repairs.push(event) }), upstream),
    { port: 0, host: '127.0.0.1' },
  );
  try {
    await resumeThrough(harness, outcomes, relay.url, 'the sanitizing fetch', pending);
    harness.log(`   repaired: ${[...new Set(repairs.flatMap((event) => event.rules))].join(', ') || 'nothing'}`);
  } finally {
    await relay.close();
  }
  if (proxy === undefined || steps.proxy === undefined) return;
  harness.log(steps.proxy);
  const served = await proxy(upstream);
  try {
    await resumeThrough(harness, outcomes, served.url, served.label, pending);
  } finally {
    await served.close();
  }
}
