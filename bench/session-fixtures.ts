import type { Message } from '../src/core/messages.js';
import { seededRandom } from '../test/support/random.js';

const WORDS = [
  'the',
  'file',
  'test',
  'function',
  'return',
  'value',
  'error',
  'import',
  'const',
  'session',
  'tool',
  'call',
  '会话',
  '标记',
  '修复',
  '消息',
  '工具',
  '请求',
];

function text(next: () => number, length: number): string {
  let out = '';
  while (out.length < length) out += `${WORDS[Math.floor(next() * WORDS.length)]}${next() < 0.1 ? '\n' : ' '}`;
  return out.slice(0, length);
}

/**
 * A session shaped like the 3,785-message session-122357 of NexForgeCLI 0.4.1 (a terminal agent
 * for DeepSeek, `nexforge-cli` on PyPI): 1 system, then user turns, each followed by rounds of an
 * assistant with reasoning and 1-2 tool calls, their results, and assistant text in between.
 * Roles come out near that session's split (user 44, assistant 2673, tool 1067 of 3785).
 */
export function seedLikeSession(scale: number): Message[] {
  const next = seededRandom(20260912 + scale);
  const target = 3785 * scale;
  const messages: Message[] = [{ role: 'system', content: text(next, 2000) }];
  let call = 0;
  while (messages.length < target) {
    messages.push({ role: 'user', content: text(next, 160) });
    const rounds = 20 + Math.floor(next() * 10);
    for (let round = 0; round < rounds && messages.length < target; round += 1) {
      const calls = Array.from({ length: next() < 0.3 ? 2 : 1 }, () => ({
        id: `call_${String(call++).padStart(2, '0')}_${Math.floor(next() * 1e9).toString(36)}`,
        type: 'function',
        function: {
          name: 'read_file',
          arguments: JSON.stringify({ path: `src/${text(next, 12).replace(/\s/g, '_')}.py` }),
        },
      }));
      messages.push({ role: 'assistant', content: '', reasoning_content: text(next, 160), tool_calls: calls });
      for (const toolCall of calls)
        messages.push({ role: 'tool', tool_call_id: toolCall.id, content: text(next, 560) });
      for (let extra = next() < 0.5 ? 1 : 2; extra > 0; extra -= 1)
        messages.push({ role: 'assistant', content: text(next, 150), reasoning_content: text(next, 60) });
    }
  }
  return messages.slice(0, target);
}
