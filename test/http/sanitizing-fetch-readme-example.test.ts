import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { beforeAndAfter } from '../../examples/sanitizing-fetch.js';
import { createEmulator } from '../../src/emulator/index.js';

/**
 * The README's before/after for `createSanitizingFetch` is examples/sanitizing-fetch.ts, run here
 * against the strict emulator over loopback (the SDK's own HTTP, the global fetch): without the
 * sanitizing fetch the openai SDK gets OpenAI's 400 for the unanswered call, with it the same call
 * is answered. The second test keeps the README's snippet the example's code, line for line.
 */
const emulator = createEmulator({ profile: 'openai' });
let baseURL = '';
let close = async (): Promise<void> => {};
before(async () => {
  const server = await emulator.listen();
  baseURL = `${server.url}/v1`;
  close = server.close;
});
after(() => close());

test('the README example: the openai SDK gets the 400 for an unanswered call, and an answer through createSanitizingFetch', async () => {
  emulator.push({ text: 'notes.md says the answer is 42.' });
  const { before: refused, after: answered } = await beforeAndAfter(baseURL, 'sk-test');

  assert.equal(
    refused,
    "400 An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_1",
  );
  assert.equal(answered, '200 notes.md says the answer is 42.');

  const [first, second] = emulator.requests;
  assert.equal(emulator.requests.length, 2);
  assert.deepEqual([first?.status, first?.violations[0]?.rule], [400, 'tool-calls-unanswered']);
  assert.deepEqual([second?.status, second?.violations], [200, []]);
  const result = second?.body.messages[2];
  assert.equal(result.role, 'tool');
  assert.equal(result.tool_call_id, 'call_1');
  assert.match(result.content, /did not complete/);
});

test("the README's createSanitizingFetch snippet is the example's code", () => {
  const example = readFileSync(new URL('../../examples/sanitizing-fetch.ts', import.meta.url), 'utf8');
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const imports = example
    .split('\n')
    .filter((line) => line.startsWith('import '))
    .map((line) => line.replace("'../src/http/index.js'", "'unstuck/http'"));
  const region = example.slice(example.indexOf('// README:begin\n') + 16, example.indexOf('  // README:end'));
  const body = region
    .split('\n')
    .map((line) => line.replace(/^ {2}/, ''))
    .join('\n');
  const snippet = `\`\`\`ts\n${imports.join('\n')}\n\n${body}\`\`\``;
  assert.ok(readme.includes(snippet), `README.md should contain:\n${snippet}`);
});
