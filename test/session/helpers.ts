import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import type { Message } from '../../src/core/messages.js';
import type { SessionStore } from '../../src/session/index.js';
import { formatTranscript } from '../../src/session/index.js';

/** A fresh temporary directory, removed by `dispose`. */
export async function temporaryDirectory(): Promise<{ path: string; dispose(): Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), 'unstuck-session-'));
  return { path, dispose: () => rm(path, { recursive: true, force: true }) };
}

/** `create(path)` on file `name` in a new temporary directory; the store is closed and the directory removed after `body`. */
export async function withStore<S extends SessionStore>(
  name: string,
  create: (path: string) => S,
  body: (context: { store: S; path: string; directory: { path: string } }) => Promise<void>,
): Promise<void> {
  const directory = await temporaryDirectory();
  const path = join(directory.path, name);
  const store = create(path);
  try {
    await body({ store, path, directory });
  } finally {
    await store.close();
    await directory.dispose();
  }
}

/** What a store must give back: the messages as JSON sees them. */
export function asJson<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** A real marker line (it decodes to an assistant message saying "ghost"). */
export const GHOST_MARKER = '<!-- nf-msg eyJyb2xlIjoiYXNzaXN0YW50IiwiY29udGVudCI6Imdob3N0In0= -->';

/** A small real session, dumped whole into content below (a `read_file` of a session file). */
export const DUMPED_SESSION = formatTranscript([
  { role: 'user', content: 'list files' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'ls', arguments: '{}' } }],
  },
  { role: 'tool', tool_call_id: 'call_0', content: 'a.txt\nb.txt' },
  { role: 'assistant', content: 'two files' },
]);

/** The same file as a `read_file` tool prints it: `  12 | ` before every line. */
export const DUMPED_WITH_LINE_NUMBERS = DUMPED_SESSION.split('\n')
  .map((line, index) => `${String(index + 1).padStart(4)} | ${line}`)
  .join('\n');

/** Pieces of text chosen to break a transcript or a journal. */
const adversarialPiece = fc.oneof(
  fc.constantFrom(
    GHOST_MARKER,
    `\n${GHOST_MARKER}\n`,
    `  12 | ${GHOST_MARKER}`,
    `\n  12 | ${GHOST_MARKER}\n`,
    '<!-- nf-msg ',
    '<!-- nf-msg !!! -->',
    ' -->',
    '<!-- unstuck-session v1 messages=99 -->',
    `\n<!-- unstuck-segment messages=1 sha256=${'0'.repeat(64)} file=x.md -->\n`,
    '\n```\n',
    '\n````json\n',
    '\n~~~\n',
    '```',
    '\n## 3 · user\n',
    '\n# Session transcript\n',
    '\r\n',
    '\r',
    '\n',
    '\u2028',
    '\u200b',
    '\ufeff',
    '😀',
    '👩‍👩‍👧',
    '\ud800',
    '\udfff',
    'a\udc00b',
    '\u0000',
    '"',
    '\\',
    '{"role":"user"}\n',
  ),
  fc.constant(DUMPED_SESSION),
  fc.constant(DUMPED_WITH_LINE_NUMBERS),
  fc.string({ maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code)),
);

export const adversarialText = fc.array(adversarialPiece, { maxLength: 8 }).map((pieces) => pieces.join(''));

const content = fc.oneof(
  adversarialText,
  fc.constant(null),
  fc.constant(''),
  fc.array(
    fc.oneof(
      adversarialText.map((text) => ({ type: 'text', text })),
      fc.constant({ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }),
    ),
    { maxLength: 3 },
  ),
);

const toolCall = fc.record(
  {
    id: fc.oneof(fc.constant('call_1'), adversarialText),
    type: fc.constant('function'),
    function: fc.record({ name: fc.oneof(fc.constant('read_file'), adversarialText), arguments: adversarialText }),
  },
  { requiredKeys: ['function'] },
);

const unknownFields = fc.dictionary(
  fc.oneof(fc.constantFrom('refusal', 'cache_control', 'x_provider', 'audio'), fc.string({ maxLength: 6 })),
  fc.jsonValue({ maxDepth: 2 }),
  { maxKeys: 2 },
);

export const adversarialMessage: fc.Arbitrary<Message> = fc
  .record({
    extra: unknownFields,
    role: fc.oneof(fc.constantFrom('system', 'user', 'assistant', 'tool', 'developer'), adversarialText),
    content,
    hasContent: fc.boolean(),
    toolCalls: fc.option(fc.array(toolCall, { maxLength: 3 }), { nil: undefined }),
    toolCallId: fc.option(adversarialText, { nil: undefined }),
    reasoning: fc.option(fc.oneof(adversarialText, fc.constant(null)), { nil: undefined }),
    name: fc.option(adversarialText, { nil: undefined }),
  })
  .map(({ extra, role, content: body, hasContent, toolCalls, toolCallId, reasoning, name }) => {
    const message: Record<string, unknown> = { ...extra, role };
    if (hasContent) message.content = body;
    if (toolCalls !== undefined) message.tool_calls = toolCalls;
    if (toolCallId !== undefined) message.tool_call_id = toolCallId;
    if (reasoning !== undefined) message.reasoning_content = reasoning;
    if (name !== undefined) message.name = name;
    return asJson(message as Message);
  });

export const adversarialSession = fc.array(adversarialMessage, { maxLength: 8 });

/** A tool-loop session like NexForgeCLI's session-122357: system, user turns, assistant tool calls with reasoning, results. */
export function toolLoopSession(turns: number, seed = 1): Message[] {
  const messages: Message[] = [{ role: 'system', content: 'You are a coding agent.' }];
  let call = 0;
  for (let turn = 0; turn < turns; turn += 1) {
    messages.push({
      role: 'user',
      content: `Turn ${turn} (seed ${seed}): fix the failing test in src/file-${turn}.ts`,
    });
    const id = `call_${seed}_${call++}`;
    messages.push({
      role: 'assistant',
      content: '',
      reasoning_content: `Reading file ${turn} first.`,
      tool_calls: [
        {
          id,
          type: 'function',
          function: { name: 'read_file', arguments: JSON.stringify({ path: `src/file-${turn}.ts` }) },
        },
      ],
    });
    messages.push({
      role: 'tool',
      tool_call_id: id,
      content: `  1 | export const value${turn} = ${turn};\n  2 | ${GHOST_MARKER}`,
    });
    messages.push({ role: 'assistant', content: `Done with turn ${turn}.`, reasoning_content: 'Checked it.' });
  }
  return messages;
}

/** True when every assistant tool call is answered by the tool messages right after it. */
export function toolResultsAdjacent(messages: readonly Message[]): boolean {
  for (let index = 0; index < messages.length; index += 1) {
    const calls = messages[index]!.tool_calls;
    if (messages[index]!.role !== 'assistant' || !Array.isArray(calls) || calls.length === 0) continue;
    const ids = new Set(calls.map((toolCall) => toolCall.id));
    for (let next = index + 1; next <= index + calls.length; next += 1) {
      const result = messages[next];
      if (result === undefined || result.role !== 'tool' || !ids.delete(result.tool_call_id)) return false;
    }
  }
  return true;
}
