/**
 * Deterministic ids: the same input always repairs to the same output, so a repair can be
 * re-run, diffed and tested. Nothing here uses a clock or randomness.
 */

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** FNV-1a over UTF-16 code units: a fast, deterministic 32-bit hash for deriving ids. */
export function fnv1a(text: string, seed: number): number {
  let hash = seed >>> 0;
  for (let index = 0; index < text.length; index += 1) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/** Nine letters and digits (Mistral's format), derived from a seed text. */
export function nineCharId(seedText: string): string {
  let a = fnv1a(seedText, 0x811c9dc5);
  let b = fnv1a(seedText, 0x12345678);
  let id = '';
  for (let index = 0; index < 9; index += 1) {
    const source = index < 5 ? a : b;
    id += ALPHABET[source % 62];
    if (index < 5) a = Math.floor(a / 62) ^ Math.imul(a, 31);
    else b = Math.floor(b / 62) ^ Math.imul(b, 31);
    a >>>= 0;
    b >>>= 0;
  }
  return id;
}

/** Hands out ids not yet taken in this history. */
export function createIdAllocator(taken: Set<string>, pattern: RegExp | undefined) {
  return (seedText: string): string => {
    for (let attempt = 0; ; attempt += 1) {
      const seed = attempt === 0 ? seedText : `${seedText}#${attempt}`;
      const id = pattern === undefined ? `call_unstuck_${nineCharId(seed)}` : nineCharId(seed);
      if (!taken.has(id) && (pattern === undefined || pattern.test(id))) {
        taken.add(id);
        return id;
      }
    }
  };
}
