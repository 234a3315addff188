import { open } from 'node:fs/promises';
import { textOf } from '../core/messages.js';
import { parseTranscript } from '../session/index.js';

const HEAD_BYTES = 16 * 1024;

/**
 * A session's first question, for `/sessions`: read from the first 16 KB of its transcript only,
 * so listing a directory of long sessions stays cheap. Undefined when there is none to be had.
 */
export async function readSessionTitle(path: string, limit = 60): Promise<string | undefined> {
  let head: string;
  try {
    const handle = await open(path, 'r');
    try {
      const buffer = Buffer.alloc(HEAD_BYTES);
      const { bytesRead } = await handle.read(buffer, 0, HEAD_BYTES, 0);
      head = buffer.subarray(0, bytesRead).toString('utf8');
    } finally {
      await handle.close();
    }
  } catch {
    return undefined;
  }
  const question = parseTranscript(head).messages.find(
    (message) => message.role === 'user' && textOf(message.content).trim() !== '',
  );
  if (question === undefined) return undefined;
  const text = textOf(question.content).replace(/\s+/g, ' ').trim();
  return text.length <= limit ? text : `${text.slice(0, limit - 3)}...`;
}
