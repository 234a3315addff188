import type { Message } from '../../src/core/messages.js';

/**
 * The sessions a crashing writer saves, numbered: version `i` is recognisable from its content,
 * so after a kill the test can tell exactly which save it is looking at.
 */
export function sessionVersion(version: number): Message[] {
  const count = 1 + ((version * 7) % 23);
  const messages: Message[] = [];
  for (let index = 0; index < count; index += 1) {
    const filler = 'x'.repeat((version * 31 + index * 17) % 400);
    // Every fifth version carries one large message, so saves take long enough to be hit midway.
    const large = version % 5 === 0 && index === 0 ? `\n${'<!-- nf-msg AAAA -->\n'.repeat(4000)}` : '';
    messages.push(
      index % 2 === 0
        ? { role: 'user', content: `v${version} m${index} ${filler}${large}` }
        : {
            role: 'assistant',
            content: null,
            reasoning_content: `v${version}`,
            tool_calls: [
              { id: `c${version}_${index}`, type: 'function', function: { name: 'f', arguments: `{"v":${version}}` } },
            ],
          },
    );
  }
  return messages;
}

/** The message a crashing journal writer appends as its `index`-th line. */
export function journalLine(index: number): Message {
  return { role: index % 2 === 0 ? 'user' : 'assistant', content: `line ${index} ${'y'.repeat((index * 13) % 3000)}` };
}
