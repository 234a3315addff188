import { spawnSync } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import type { createPending, Harness, Outcome } from './resume-poisoned.js';
import { unstuckMain } from './unstuck-proxy.js';

/**
 * The resumes that got the 400, mended on disk instead: `unstuck fix --write FILE` (the built
 * dist/cli/main.js, as a user runs it) on the poisoned session file, then the agent resumes it
 * straight at the strict emulator — no proxy, no relay — and the turn must complete with the
 * emulator seeing only valid requests. Every line the repair did not need to change must be
 * byte-identical: the lines only in the poisoned file or only in the fixed one (as multisets,
 * after `normalize`) must all be history lines (`isHistory`), and every other line must be there,
 * in the same order.
 */
export interface FixCheck {
  /** Whether a line is one the repair may rewrite, drop or add (a history record of the agent). */
  isHistory(line: string): boolean;
  /** What of a line may change besides (Codex: its `ordinal`, renumbered when a line before it moved). */
  normalize?(line: string): string;
}

export async function fixThenResume(
  harness: Harness,
  outcomes: readonly Outcome[],
  baseUrl: string,
  pending: ReturnType<typeof createPending>,
  check: FixCheck,
): Promise<void> {
  const normalize = check.normalize ?? ((line: string) => line);
  for (const outcome of outcomes.filter((entry) => entry.rules.length > 0)) {
    const name = outcome.poisoning.name;
    await writeFile(harness.file, outcome.text);
    const fixed = spawnSync(process.execPath, [unstuckMain, 'fix', '--write', harness.file], { encoding: 'utf8' });
    const mended = await readFile(harness.file, 'utf8');
    const before = outcome.text.split('\n').filter(Boolean);
    const after = mended.split('\n').filter(Boolean);
    const removed = onlyIn(before.map(normalize), after.map(normalize));
    const added = onlyIn(after.map(normalize), before.map(normalize));
    const renumbered = after.filter((line) => !before.includes(line) && !added.includes(normalize(line))).length;
    harness.log(
      `   ${name}: unstuck fix --write exit ${fixed.status}; ${removed.length} line(s) dropped or rewritten, ${added.length} written${renumbered > 0 ? `, ${renumbered} with only their ordinal moved` : ''}; ${after.length - added.length - renumbered} of ${after.length} byte for byte`,
    );
    for (const line of fixed.stderr.trim().split('\n').filter(Boolean)) harness.log(`      ${line}`);
    harness.expect(fixed.status === 0, `${name}: unstuck fix --write repairs the session file`);
    harness.expect(
      [...removed, ...added].every((line) => check.isHistory(line)),
      `${name}: the fix changed only history lines`,
    );
    const others = (lines: string[]) => lines.map(normalize).filter((line) => !check.isHistory(line));
    harness.expect(
      JSON.stringify(others(after)) === JSON.stringify(others(before)),
      `${name}: every other line is kept byte for byte, in its order`,
    );
    const kept = before.map(normalize).filter((line) => !removed.includes(line));
    const keptAfter = after.map(normalize).filter((line) => kept.includes(line));
    // A line the fix moved (an output put back after its call: `message-moved`) keeps its bytes but not its place;
    // every other untouched line keeps its order: the lines out of the longest common order are at most the moved ones.
    const moved = (fixed.stderr.match(/message-moved/g) ?? []).length;
    const outOfOrder = kept.length - commonOrder(kept, keptAfter);
    if (outOfOrder > 0) harness.log(`      ${outOfOrder} line(s) moved, as the fix says (${moved} message-moved)`);
    harness.expect(
      keptAfter.length === kept.length && outOfOrder <= moved,
      `${name}: the history lines the fix did not touch are kept byte for byte, in their order (but for the ones it moved)`,
    );
    const seenBefore = harness.seen.length;
    pending.ensure();
    const resumed = await harness.resume(baseUrl);
    const requests = harness.seen.slice(seenBefore);
    pending.settle(requests);
    harness.log(
      `   ${name} resumed straight at the strict emulator: exit ${resumed.code}, the emulator saw ${requests.map((request) => request.status).join(', ') || 'nothing'}; answer ${JSON.stringify(resumed.text ?? resumed.said)}`,
    );
    harness.expect(
      resumed.code === 0 && resumed.text === harness.answer,
      `${name}: after unstuck fix --write, the resume straight at the strict emulator completes`,
    );
    harness.expect(
      requests.length > 0 && requests.every((request) => request.status === 200),
      `${name}: after the fix the emulator saw only valid requests`,
    );
    await rm(`${harness.file}.bak`, { force: true });
    await writeFile(harness.file, harness.original);
  }
}

/** The lines of A not in B, as multisets, in A's order. */
/** The length of the longest common subsequence of a and b (session files are small: quadratic is fine). */
function commonOrder(a: readonly string[], b: readonly string[]): number {
  let previous = new Array<number>(b.length + 1).fill(0);
  for (const line of a) {
    const current = new Array<number>(b.length + 1).fill(0);
    for (const [j, other] of b.entries())
      current[j + 1] = line === other ? (previous[j] ?? 0) + 1 : Math.max(previous[j + 1] ?? 0, current[j] ?? 0);
    previous = current;
  }
  return previous[b.length] ?? 0;
}

function onlyIn(a: readonly string[], b: readonly string[]): string[] {
  const counts = new Map<string, number>();
  for (const line of b) counts.set(line, (counts.get(line) ?? 0) + 1);
  return a.filter((line) => {
    const left = counts.get(line) ?? 0;
    if (left === 0) return true;
    counts.set(line, left - 1);
    return false;
  });
}
