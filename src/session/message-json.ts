import { Buffer } from 'node:buffer';
import type { Message } from '../core/messages.js';
import { encodeUtf8, toUtf8Lines } from './utf8.js';

/**
 * Every message's JSON (as `JSON.stringify(message)` writes it), UTF-8, in one buffer:
 * `m1,m2,…,mn,` — each message followed by a comma, which is also what the transcript's digest
 * covers. `ends[i]` is where message i's JSON ends; it starts one byte after the previous end.
 */
export interface EncodedMessages {
  bytes: Buffer;
  ends: number[];
}

/** Where one message ends and the next (whose JSON starts with its `role`) begins. */
export const BOUNDARY_TEXT = '},{"role":';
const BOUNDARY = Buffer.from(BOUNDARY_TEXT);

/**
 * One `JSON.stringify` of the whole array costs about 70% of one call per message, so that is
 * tried first, and the array text is cut between messages. A cut is found by searching for
 * `},{"role":`, which cannot occur inside a JSON string (a quote in one is escaped). When every
 * message's JSON starts with `{"role":`, each of the n-1 places between messages is such a match;
 * if the search finds exactly n-1 matches, they are those places. Anything else (a message whose
 * first key is not `role`, nested objects that also start with `role`, a `toJSON`) is stringified
 * one message at a time instead.
 */
export function encodeMessages(messages: readonly Message[], first = 1): EncodedMessages {
  if (messages.length > 0 && messages.every(startsWithRole)) {
    const bytes = encodeUtf8(JSON.stringify(messages));
    const ends: number[] = [];
    for (
      let at = bytes.indexOf(BOUNDARY, 1);
      at !== -1 && ends.length < messages.length;
      at = bytes.indexOf(BOUNDARY, at + 2)
    )
      ends.push(at);
    if (ends.length === messages.length - 1 && bytes[0] === 0x5b && bytes[bytes.length - 1] === 0x5d) {
      // `[m1,…,mn]` -> `m1,…,mn,`: without the `[`, a match's offset is where its message ends.
      bytes[bytes.length - 1] = 0x2c;
      const body = bytes.subarray(1);
      ends.push(body.length - 1);
      return { bytes: body, ends };
    }
  }
  const jsons: string[] = new Array<string>(messages.length);
  for (let index = 0; index < messages.length; index += 1) {
    const json = JSON.stringify(messages[index]);
    if (typeof json !== 'string') throw new TypeError(`message ${first + index} is not JSON-serializable`);
    jsons[index] = json;
  }
  const bytes = toUtf8Lines(jsons);
  const ends: number[] = new Array<number>(messages.length);
  let start = 0;
  for (let index = 0; index < ends.length; index += 1) {
    const end = bytes.indexOf(0x0a, start);
    ends[index] = end;
    bytes[end] = 0x2c; // ,
    start = end + 1;
  }
  return { bytes, ends };
}

/** True when `JSON.stringify(message)` starts with `{"role":"`: a plain object whose first key is a string `role`. */
export function startsWithRole(message: Message): boolean {
  if (message === null || typeof message !== 'object' || Array.isArray(message) || typeof message.role !== 'string')
    return false;
  if (typeof (message as { toJSON?: unknown }).toJSON === 'function') return false;
  if (!Object.hasOwn(message, 'role')) return false;
  // Own keys come first in for-in, in the order JSON.stringify writes them.
  for (const key in message) return key === 'role';
  return false;
}
