import { UnstuckError } from './errors.js';
import type { FormatName } from './formats/format-types.js';
import type { ProfileName } from './profile.js';
import { createTokenEstimator, type TokenEstimator } from './token-estimate.js';
import { type TrimShape, trimShapeOf } from './trim-shapes.js';

/** What a tool result's content becomes in the placeholder mode. */
export const TRIMMED_RESULT = '[result cleared to save context; call the tool again if you need it]';

export interface TrimOptions {
  /** The budget for the history itself (leave out what the system prompt, tools and answer need). */
  maxTokens: number;
  /** The wire format of `items`. Default `openai-chat`. */
  format?: FormatName;
  /**
   * `drop` (default): leave out the oldest turns. `placeholder`: keep every element and replace
   * the contents of the oldest tool results with `marker`, for when order matters more than bulk.
   */
  mode?: 'drop' | 'placeholder';
  /** How tokens are estimated. Default: `createTokenEstimator({ profile })`. */
  estimator?: TokenEstimator;
  /** Picks the default estimator when `estimator` is not given. */
  profile?: ProfileName;
  /** Placeholder mode: what a cleared result says. Default TRIMMED_RESULT. */
  marker?: string;
  /** Placeholder mode: the newest results that are never cleared. Default 3 (as Anthropic's context editing keeps). */
  keepToolResults?: number;
}

export interface TrimResult<T> {
  /** The trimmed history; the input array itself when nothing was done. */
  items: T[];
  changed: boolean;
  /** Input indices left out (drop mode), ascending. */
  omitted: number[];
  /** Input indices whose results' contents were replaced by the marker (placeholder mode), ascending. */
  cleared: number[];
  /** Estimated tokens of `items`. */
  estimatedTokens: number;
  /** Estimated tokens left out, or saved by the markers. */
  savedTokens: number;
  /** Whether `items` fits `maxTokens`: when false, even the smallest valid history this mode can make is over. */
  fits: boolean;
}

/**
 * Fits a history into a token budget without ever breaking a tool block. Drop mode keeps the
 * leading system messages and the newest whole turns (a turn starts at the person's own message);
 * when the newest turn alone is over, it keeps that turn's opening message and its newest whole
 * steps (a step starts at an assistant element outside any tool block). A cut never falls inside a
 * tool block (a call and every one of its results, with whatever stands between them), so a valid
 * history stays valid and no result is left without its call or a call without its results.
 * Everything left out is named in `omitted`. Placeholder mode keeps every element, and every call
 * paired, and replaces the contents of the oldest results with a marker until the history fits.
 *
 * Elements are never mutated; kept ones are the same objects. A history already under the budget
 * comes back as the same array, `changed: false`. Linear in the size of the history.
 */
export function trim<T>(items: readonly T[], options: TrimOptions): TrimResult<T> {
  if (!Array.isArray(items)) throw new UnstuckError('INPUT_INVALID', 'trim: the history must be an array');
  if (!(options.maxTokens >= 0))
    throw new UnstuckError('USAGE', `trim: maxTokens must be a number of tokens, got ${String(options.maxTokens)}`);
  const shape = trimShapeOf(options.format ?? 'openai-chat');
  const estimator =
    options.estimator ?? createTokenEstimator(options.profile === undefined ? {} : { profile: options.profile });
  const sizes = new Array<number>(items.length);
  let total = 0;
  for (let index = 0; index < items.length; index += 1) {
    const chars = estimator.chars(items[index]);
    sizes[index] = chars;
    total += chars;
  }
  const totalTokens = estimator.tokensOf(total);
  if (totalTokens <= options.maxTokens) return unchanged(items, totalTokens, true);
  return options.mode === 'placeholder'
    ? placeholder(items, shape, sizes, total, estimator, options)
    : drop(items, shape, sizes, estimator, options.maxTokens);
}

function unchanged<T>(items: readonly T[], estimatedTokens: number, fits: boolean): TrimResult<T> {
  return { items: items as T[], changed: false, omitted: [], cleared: [], estimatedTokens, savedTokens: 0, fits };
}

/**
 * Where a history may be cut: `cut[i]` is true when no tool block is open before element i and
 * element i holds no result, so leaving out everything before i (after the lead) splits nothing.
 * A block opens at an element with calls (consecutive call elements, as Responses has them, add to
 * it) and stays open until as many results as calls have come; results answer by id where both
 * carry one, by count otherwise (Gemini pairs by order). A block whose calls are never all answered
 * stays open until the next block opens: only an invalid history has one, and no cut falls there.
 */
function cutPoints(items: readonly unknown[], shape: TrimShape): boolean[] {
  const cut = new Array<boolean>(items.length);
  let pending = 0;
  let resultsSeen = 0;
  for (let index = 0; index < items.length; index += 1) {
    const element = items[index];
    const results = shape.resultIds(element).length;
    cut[index] = pending <= 0 && results === 0;
    pending -= results;
    resultsSeen += results;
    const calls = shape.callIds(element).length;
    if (calls > 0) {
      if (pending > 0 && resultsSeen === 0) pending += calls;
      else pending = calls;
      resultsSeen = 0;
    }
  }
  return cut;
}

function leadLength(items: readonly unknown[], shape: TrimShape): number {
  let lead = 0;
  while (lead < items.length && shape.isLead(items[lead])) lead += 1;
  return lead;
}

function drop<T>(
  items: readonly T[],
  shape: TrimShape,
  sizes: number[],
  estimator: TokenEstimator,
  maxTokens: number,
): TrimResult<T> {
  const lead = leadLength(items, shape);
  const cut = cutPoints(items, shape);
  let leadChars = 0;
  for (let index = 0; index < lead; index += 1) leadChars += sizes[index] as number;
  // suffix[i]: chars of items[i..]
  const suffix = new Array<number>(items.length + 1);
  suffix[items.length] = 0;
  for (let index = items.length - 1; index >= 0; index -= 1)
    suffix[index] = (suffix[index + 1] as number) + (sizes[index] as number);
  const fits = (chars: number): boolean => estimator.tokensOf(chars) <= maxTokens;

  let lastTurn = -1;
  for (let index = lead; index < items.length; index += 1) {
    if (!cut[index] || !shape.isUserText(items[index])) continue;
    lastTurn = index;
    // The oldest turn start that fits keeps the most.
    if (index > lead && fits(leadChars + (suffix[index] as number)))
      return keep(items, sizes, estimator, lead, [[index, items.length]], true);
  }
  if (lastTurn < 0) return unchanged(items, estimator.tokensOf(leadChars + (suffix[lead] as number)), false);
  // The newest turn alone is over: keep its opening message and its newest whole steps.
  const opening = sizes[lastTurn] as number;
  let newestStep = -1;
  for (let index = lastTurn + 1; index < items.length; index += 1) {
    if (!cut[index] || !shape.isAssistant(items[index]) || shape.joinsPrevious(items[index], items[index - 1]))
      continue;
    newestStep = index;
    if (fits(leadChars + opening + (suffix[index] as number)))
      return keep(
        items,
        sizes,
        estimator,
        lead,
        [
          [lastTurn, lastTurn + 1],
          [index, items.length],
        ],
        true,
      );
  }
  if (newestStep < 0) return keep(items, sizes, estimator, lead, [[lastTurn, items.length]], false);
  return keep(
    items,
    sizes,
    estimator,
    lead,
    [
      [lastTurn, lastTurn + 1],
      [newestStep, items.length],
    ],
    false,
  );
}

function keep<T>(
  items: readonly T[],
  sizes: number[],
  estimator: TokenEstimator,
  lead: number,
  ranges: [number, number][],
  fits: boolean,
): TrimResult<T> {
  const kept: T[] = items.slice(0, lead);
  const omitted: number[] = [];
  let keptChars = 0;
  let omittedChars = 0;
  for (let index = 0; index < lead; index += 1) keptChars += sizes[index] as number;
  let cursor = lead;
  for (const [start, end] of ranges) {
    for (let index = cursor; index < start; index += 1) {
      omitted.push(index);
      omittedChars += sizes[index] as number;
    }
    for (let index = start; index < end; index += 1) {
      kept.push(items[index] as T);
      keptChars += sizes[index] as number;
    }
    cursor = end;
  }
  const estimatedTokens = estimator.tokensOf(keptChars);
  if (omitted.length === 0) return unchanged(items, estimatedTokens, fits);
  return {
    items: kept,
    changed: true,
    omitted,
    cleared: [],
    estimatedTokens,
    savedTokens: estimator.tokensOf(omittedChars),
    fits,
  };
}

function placeholder<T>(
  items: readonly T[],
  shape: TrimShape,
  sizes: number[],
  total: number,
  estimator: TokenEstimator,
  options: TrimOptions,
): TrimResult<T> {
  const marker = options.marker ?? TRIMMED_RESULT;
  const keepResults = Math.max(0, options.keepToolResults ?? 3);
  // The newest `keepResults` results stay: find the first element that may not be cleared.
  let protectedFrom = items.length;
  let counted = 0;
  while (protectedFrom > 0 && counted < keepResults) {
    protectedFrom -= 1;
    counted += shape.resultIds(items[protectedFrom]).length;
  }
  if (counted < keepResults) protectedFrom = 0;
  let out: T[] | undefined;
  const cleared: number[] = [];
  let chars = total;
  let saved = 0;
  for (let index = 0; index < protectedFrom && estimator.tokensOf(chars) > options.maxTokens; index += 1) {
    const element = items[index];
    if (shape.resultIds(element).length === 0) continue;
    const marked = shape.withMarker(element, marker);
    if (marked === element) continue;
    const size = estimator.chars(marked);
    if (size >= (sizes[index] as number)) continue; // a result already as short as the marker stays as it is
    out ??= items.slice();
    out[index] = marked as T;
    cleared.push(index);
    saved += (sizes[index] as number) - size;
    chars -= (sizes[index] as number) - size;
  }
  const estimatedTokens = estimator.tokensOf(chars);
  const fits = estimatedTokens <= options.maxTokens;
  if (out === undefined) return unchanged(items, estimatedTokens, fits);
  return {
    items: out,
    changed: true,
    omitted: [],
    cleared,
    estimatedTokens,
    savedTokens: estimator.tokensOf(saved),
    fits,
  };
}
