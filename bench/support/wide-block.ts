import type { Message, ToolCall } from '../../src/index.js';

/**
 * One assistant message with `calls` parallel tool calls and its results: the shape that once
 * froze the proxy (one 6.4 MB request with 5x10^4 calls). Deterministic.
 *
 * - 'clean': every call answered once, in order.
 * - 'damaged': results out of order, some lost, some twice, some with an id no call has, a user
 *   message wedged into the results, calls without ids, ids used by two calls.
 * - 'constant-id': every call and result carries the same id (llama.cpp's constant id).
 * - 'no-ids': neither calls nor results carry ids.
 */
export type WideShape = 'clean' | 'damaged' | 'constant-id' | 'no-ids';

export function wideBlock(calls: number, shape: WideShape): Message[] {
  const idOf = (position: number) => {
    if (shape === 'constant-id') return 'call_0';
    if (shape === 'no-ids') return undefined;
    if (shape === 'damaged' && position % 97 === 5) return undefined;
    if (shape === 'damaged' && position % 89 === 7) return `call_${position - 1}`;
    return `call_${position}`;
  };
  const toolCalls: ToolCall[] = [];
  for (let position = 0; position < calls; position += 1) {
    const id = idOf(position);
    toolCalls.push({
      ...(id === undefined ? {} : { id }),
      type: 'function',
      function: { name: 'read_file', arguments: `{"path":"src/f${position}.ts"}` },
    });
  }
  const messages: Message[] = [
    { role: 'user', content: 'read every file' },
    { role: 'assistant', content: '', tool_calls: toolCalls },
  ];
  const results: Message[] = [];
  for (let position = 0; position < calls; position += 1) {
    const id = idOf(position);
    results.push({
      role: 'tool',
      ...(id === undefined ? {} : { tool_call_id: id }),
      content: `contents of f${position}`,
    });
  }
  if (shape === 'damaged') {
    const damaged: Message[] = [];
    for (let position = 0; position < results.length; position += 1) {
      const result = results[(position * 7919) % results.length] as Message; // out of order (7919 is prime)
      if (position % 53 === 3) continue; // lost
      if (position % 61 === 4) damaged.push(result); // answered twice
      if (position % 71 === 9) damaged.push({ role: 'tool', tool_call_id: `call_gone_${position}`, content: 'orphan' });
      if (position === Math.floor(results.length / 2)) damaged.push({ role: 'user', content: 'are you done?' });
      damaged.push(result);
    }
    messages.push(...damaged);
  } else {
    messages.push(...results);
  }
  messages.push({ role: 'assistant', content: 'done' }, { role: 'user', content: 'thanks' });
  return messages;
}
