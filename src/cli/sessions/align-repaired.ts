/**
 * Lines a repaired history up against the history it was repaired from. The core returns untouched elements as the
 * same objects, so those anchor the alignment; between two anchors, elements of the same role pair up as changed,
 * and the rest are added (an output element with no input) or dropped (an input element with no output). An input
 * element the output holds elsewhere (the repair moved it) is dropped where it was and added, `from` it, where it is.
 */
export type AlignStep =
  | { kind: 'same'; input: number; output: Record<string, unknown> }
  | { kind: 'changed'; input: number; output: Record<string, unknown> }
  | { kind: 'dropped'; input: number }
  /** `before`: the input element the added one goes before (the input's length: at the end). */
  | { kind: 'added'; before: number; output: Record<string, unknown>; from?: number };

export function alignRepaired(input: readonly unknown[], output: readonly unknown[]): AlignStep[] {
  const indexOf = new Map<unknown, number>();
  input.forEach((value, index) => {
    if (!indexOf.has(value)) indexOf.set(value, index);
  });
  const steps: AlignStep[] = [];
  let next = 0;
  let pending: Record<string, unknown>[] = [];
  const movedFrom = new Map<unknown, number>();
  for (const value of output) {
    const at = indexOf.get(value);
    if (at !== undefined && at >= next) {
      pairGap(input, next, at, pending, steps, movedFrom);
      steps.push({ kind: 'same', input: at, output: value as Record<string, unknown> });
      next = at + 1;
      pending = [];
    } else {
      if (at !== undefined) movedFrom.set(value, at);
      pending.push(isRecord(value) ? value : { content: value });
    }
  }
  pairGap(input, next, input.length, pending, steps, movedFrom);
  return steps;
}

function pairGap(
  input: readonly unknown[],
  from: number,
  to: number,
  all: Record<string, unknown>[],
  steps: AlignStep[],
  movedFrom: ReadonlyMap<unknown, number>,
): void {
  // A moved element goes where it now is; the others pair up in order.
  const moved = all.filter((output) => movedFrom.has(output));
  const outputs = all.filter((output) => !movedFrom.has(output));
  let a = from;
  let b = 0;
  const flushMoved = (before: number) => {
    for (const output of moved.splice(0))
      steps.push({ kind: 'added', before, output, from: movedFrom.get(output) as number });
  };
  while (a < to && b < outputs.length) {
    const output = outputs[b] as Record<string, unknown>;
    if (roleOf(input[a]) === output['role']) {
      steps.push({ kind: 'changed', input: a, output });
      a += 1;
      b += 1;
    } else if (outputs.length - b > to - a) {
      steps.push({ kind: 'added', before: a, output });
      b += 1;
    } else {
      steps.push({ kind: 'dropped', input: a });
      a += 1;
    }
  }
  for (; a < to; a += 1) steps.push({ kind: 'dropped', input: a });
  flushMoved(to);
  for (; b < outputs.length; b += 1)
    steps.push({ kind: 'added', before: to, output: outputs[b] as Record<string, unknown> });
}

function roleOf(value: unknown): unknown {
  return isRecord(value) ? value['role'] : undefined;
}

export type Block = Record<string, unknown>;

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** A message's content as blocks: a string is one text block. */
export function contentBlocks(content: unknown): Block[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return Array.isArray(content) ? content.filter(isRecord) : [];
}

export function sameJson(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}
