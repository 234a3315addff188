import type { Message } from '../../src/index.js';

/**
 * A history shaped like a real DeepSeek session that got stuck: NexForgeCLI's session-122357,
 * the one nexforge-cli 0.4.1 was released to rescue (https://pypi.org/project/nexforge-cli/0.4.1/;
 * 3,785 messages, about 0.9 M characters; 1 system, 44 user, 2,673 assistant, 1,067 tool; DeepSeek thinking-mode
 * tool loops with reasoning_content). Deterministic: a seeded generator, so every run measures
 * the same bytes.
 */
export function seedShapedHistory(scale = 1): Message[] {
  let state = 0x2545f491;
  const random = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 0x1_0000_0000;
  };
  const text = (length: number) => {
    const words = [
      'the',
      'build',
      'fails',
      'because',
      'module',
      'import',
      'path',
      'config',
      'test',
      'passes',
      'read',
      'file',
      '函数',
      'λ',
      'ok',
    ];
    let out = '';
    while (out.length < length) out += `${words[Math.floor(random() * words.length)]} `;
    return out.slice(0, length);
  };
  const messages: Message[] = [{ role: 'system', content: text(1200) }];
  const assistantsPerTurn = 61;
  const turns = 44 * scale;
  let id = 0;
  for (let turn = 0; turn < turns; turn += 1) {
    messages.push({ role: 'user', content: text(120 + Math.floor(random() * 200)) });
    // ~61 assistant messages and ~24 tool results per turn, as in that session's role counts.
    let assistants = 0;
    while (assistants < assistantsPerTurn) {
      if (random() < 0.26) {
        const calls = 1 + Math.floor(random() * 2);
        const toolCalls = [];
        for (let index = 0; index < calls; index += 1) {
          id += 1;
          toolCalls.push({
            id: `call_${String(id).padStart(2, '0')}_${((id * 2654435761) >>> 0).toString(36)}`,
            type: 'function',
            function: {
              name: random() < 0.5 ? 'read_file' : 'run_command',
              arguments: JSON.stringify({ path: `src/${text(12).trim()}.ts` }),
            },
          });
        }
        messages.push({
          role: 'assistant',
          content: random() < 0.5 ? '' : text(40),
          reasoning_content: text(90),
          tool_calls: toolCalls,
        });
        for (const call of toolCalls)
          messages.push({ role: 'tool', tool_call_id: call.id, content: text(250 + Math.floor(random() * 260)) });
      } else {
        messages.push({ role: 'assistant', content: text(70), reasoning_content: text(80) });
      }
      assistants += 1;
    }
  }
  return messages;
}

/** Damages about `rate` of the messages the ways agents do: lost results, wedged messages, duplicates, lost reasoning. */
export function corrupt(messages: readonly Message[], rate: number): Message[] {
  let state = 0x9e3779b9;
  const random = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 0x1_0000_0000;
  };
  const out: Message[] = [];
  for (const message of messages) {
    if (random() >= rate) {
      out.push(message);
      continue;
    }
    const kind = Math.floor(random() * 4);
    if (message.role === 'tool' && kind === 0) continue; // a lost result
    if (message.role === 'tool' && kind === 1) {
      out.push({ role: 'user', content: 'continue' }, message); // a message wedged into the block
      continue;
    }
    if (message.role === 'tool' && kind === 2) {
      out.push(message, { ...message }); // a duplicated result
      continue;
    }
    if (message.role === 'assistant') {
      const { reasoning_content: _lost, ...rest } = message;
      out.push(rest as Message); // reasoning stripped by a client
      continue;
    }
    out.push(message);
  }
  return out;
}
