/**
 * Lines a repaired history up against the history it was repaired from. The core returns untouched elements as the
 * same objects, so those anchor the alignment; between two anchors, elements of the same role pair up as changed,
 * and the rest are added (an output element with no input) or dropped (an input element with no output).
 */
export type AlignStep =
  | { kind: 'same'; input: number; output: Record<string, unknown> }
  | { kind: 'changed'; input: number; output: Record<string, unknown> }
  | { kind: 'dropped'; input: number }
  /** `before`: the input element the added one goes before (the input's length: at the end). */
  | { kind: 'added'; before: number; output: Record<string, unknown> };

export function alignRepaired(input: readonly unknown[], output: readonly unknown[]): AlignStep[] {
  const indexOf = new Map<unknown, number>();
  input.forEach((value, index) => {
    if (!indexOf.has(value)) indexOf.set(value, index);
  });
  const steps: AlignStep[] = [];
  let next = 0;
  let pending: Record<string, unknown>[] = [];
  for (const value of output) {
    const at = indexOf.get(value);
    if (at !== undefined && at >= next) {
      pairGap(input, next, at, pending, steps);
      steps.push({ kind: 'same', input: at, output: value as Record<string, unknown> });
      next = at + 1;
      pending = [];
    } else pending.push(isRecord(value) ? value : { content: value });
  }
  pairGap(input, next, input.length, pending, steps);
  return steps;
}

function pairGap(
  input: readonly unknown[],
  from: number,
  to: number,
  outputs: Record<string, unknown>[],
  steps: AlignStep[],
): void {
  let a = from;
  let b = 0;
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
