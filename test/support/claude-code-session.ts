import { readFileSync } from 'node:fs';

/**
 * The messages Claude Code sends when it resumes a session file of test/fixtures/agents/claude-code/
 * (`claude --resume <id> -p "…"`): each `user`/`assistant` event's message, one message's events
 * (the same `message.id`: thinking, text and tool_use each on its own line) joined into one, then
 * the new prompt. What it sends with them: the model and thinking setting of its `api-request` lines.
 */
export const CLAUDE_CODE_REQUEST = {
  model: 'claude-opus-5-5',
  max_tokens: 128000,
  thinking: { type: 'adaptive', display: 'omitted' },
} as const;

export function claudeCodeMessages(name: string, prompt = 'And now?'): unknown[] {
  return claudeCodeMessagesOf(
    readFileSync(new URL(`../fixtures/agents/claude-code/${name}`, import.meta.url), 'utf8'),
    prompt,
  );
}

/** The same, for a session file's text (a poisoned copy made in memory). */
export function claudeCodeMessagesOf(text: string, prompt = 'And now?'): unknown[] {
  const messages: { role: string; content: unknown; id?: string }[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const event = JSON.parse(line) as { type?: string; message?: { role: string; content: unknown; id?: string } };
    if ((event.type !== 'user' && event.type !== 'assistant') || event.message === undefined) continue;
    const { role, content, id } = event.message;
    const last = messages[messages.length - 1];
    if (role === 'assistant' && last?.role === 'assistant' && id !== undefined && last.id === id) {
      last.content = [...(last.content as unknown[]), ...(content as unknown[])];
      continue;
    }
    messages.push({
      role,
      content: Array.isArray(content) ? [...content] : content,
      ...(id === undefined ? {} : { id }),
    });
  }
  return [...messages.map(({ role, content }) => ({ role, content })), { role: 'user', content: prompt }];
}
