/**
 * The README's before/after for `createSanitizingFetch`, runnable: the official `openai` SDK sends a
 * history whose last tool call never got its result (an agent that crashed while the tool ran), and
 * the provider refuses it with a 400; the same call with `fetch: createSanitizingFetch()` goes
 * through, because the request is repaired before it leaves. test/http/sanitizing-fetch-example.test.ts
 * runs it against the strict emulator and checks that the README shows this code.
 *
 * Installed as a package, the import is `from 'unstuck/http'`.
 */
import OpenAI from 'openai';
import { createSanitizingFetch } from '../src/http/index.js';

export async function beforeAndAfter(baseURL: string, apiKey: string): Promise<{ before: string; after: string }> {
  // README:begin
  const messages: OpenAI.ChatCompletionMessageParam[] = [
    { role: 'user', content: 'What does notes.md say?' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"notes.md"}' } },
      ],
    },
    // the agent crashed here: no { role: 'tool', tool_call_id: 'call_1' } was ever saved
    { role: 'user', content: 'Are you still there?' },
  ];

  const plain = new OpenAI({ baseURL, apiKey, maxRetries: 0 });
  const before = await plain.chat.completions.create({ model: 'gpt-4o', messages }).then(
    (completion) => `200 ${completion.choices[0]?.message.content}`,
    (error: unknown) => (error instanceof OpenAI.APIError ? error.message : String(error)),
  );
  // before: "400 An assistant message with 'tool_calls' must be followed by tool messages responding
  //          to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_1"

  const client = new OpenAI({ baseURL, apiKey, maxRetries: 0, fetch: createSanitizingFetch() });
  const completion = await client.chat.completions.create({ model: 'gpt-4o', messages });
  const after = `200 ${completion.choices[0]?.message.content}`;
  // after: the request went out with an error result for call_1 ("this tool call did not complete…"),
  //        so the model can answer, and try the tool again
  // README:end
  return { before, after };
}
