import { randomUUID } from 'node:crypto';

/**
 * Poisonings of a Claude Code session file (JSONL, one event per line), each the shape of a
 * reported failure. A poisoning changes, adds or re-links the lines it needs; every other line
 * is kept byte for byte. Which of them Claude Code heals by itself on `--resume` is what
 * `npm run e2e:agents` finds out.
 */

export interface Poisoned {
  text: string;
  /** 1-based line numbers (in the poisoned file) of the lines added or changed. */
  lines: number[];
}

export interface Poisoning {
  name: string;
  /** The rule the API rejects the resumed request with, if Claude Code sends it as it is. */
  rule: string;
  what: string;
  /** Whether a request body still carries the poisoned construct (so "healed" is seen on the wire, not inferred from a 200). */
  sent(body: any): boolean;
  apply(jsonl: string, newUuid?: () => string): Poisoned;
}

type Event = Record<string, any>;

const isCallEvent = (event: Event | undefined): boolean =>
  event?.type === 'assistant' &&
  Array.isArray(event.message?.content) &&
  event.message.content.some((block: any) => block?.type === 'tool_use');
const isResultEvent = (event: Event | undefined): boolean =>
  event?.type === 'user' &&
  Array.isArray(event.message?.content) &&
  event.message.content.some((block: any) => block?.type === 'tool_result');
const messagesOf = (body: any): any[] => (Array.isArray(body?.messages) ? body.messages : []);
const blocksOf = (message: any): any[] => (Array.isArray(message?.content) ? message.content : []);
const isBlank = (block: any): boolean =>
  block?.type === 'text' && typeof block.text === 'string' && block.text.trim() === '';
const some = (body: any, role: string, test: (blocks: any[]) => boolean): boolean =>
  messagesOf(body).some((message) => message?.role === role && test(blocksOf(message)));
const withContent = (event: Event, content: unknown[]): Event => ({ ...event, message: { ...event.message, content } });

export const poisonings: readonly Poisoning[] = [
  {
    name: 'whitespace-text-event-before-tool-use',
    rule: 'text-block-empty',
    what: 'a whitespace-only text block streamed before the tool_use: an assistant event of its own with the same message.id, the call re-linked onto it (hermes-agent#70475)',
    sent: (body) =>
      some(body, 'assistant', (blocks) => blocks.some(isBlank) && blocks.some((block) => block?.type === 'tool_use')),
    apply: (jsonl, newUuid = randomUUID) =>
      insertBefore(jsonl, isCallEvent, (event) => {
        const uuid = newUuid();
        return [
          { ...withContent(event, [{ type: 'text', text: ' \n' }]), uuid },
          { ...event, parentUuid: uuid },
        ];
      }),
  },
  {
    name: 'whitespace-text-event-after-tool-use',
    rule: 'text-block-empty',
    what: 'a whitespace-only text block streamed after the tool_use: an assistant event of its own with the same message.id, child of the call, the result re-linked onto it',
    sent: (body) =>
      some(body, 'assistant', (blocks) => blocks.some(isBlank) && blocks.some((block) => block?.type === 'tool_use')),
    apply: (jsonl, newUuid = randomUUID) => {
      const lines = jsonl.split('\n');
      const callIndex = lines.findIndex((line) => isCallEvent(parse(line)));
      const resultIndex = lines.findIndex((line, index) => index > callIndex && isResultEvent(parse(line)));
      if (callIndex < 0 || resultIndex < 0) throw new Error('the session file has no call followed by its result');
      const call = parse(lines[callIndex] as string) as Event;
      const result = parse(lines[resultIndex] as string) as Event;
      const uuid = newUuid();
      lines[resultIndex] = JSON.stringify({ ...result, parentUuid: uuid });
      lines.splice(
        callIndex + 1,
        0,
        JSON.stringify({ ...withContent(call, [{ type: 'text', text: ' \n' }]), uuid, parentUuid: call['uuid'] }),
      );
      return { text: lines.join('\n'), lines: [callIndex + 2, resultIndex + 2] };
    },
  },
  {
    name: 'whitespace-text-beside-tool-use',
    rule: 'text-block-empty',
    what: "the tool_use event's content is [tool_use, text of only whitespace]",
    sent: (body) =>
      some(body, 'assistant', (blocks) => blocks.some(isBlank) && blocks.some((block) => block?.type === 'tool_use')),
    apply: (jsonl) =>
      edit(jsonl, isCallEvent, (event) => withContent(event, [...event.message.content, { type: 'text', text: ' ' }])),
  },
  {
    name: 'empty-text-beside-tool-use',
    rule: 'text-block-empty',
    what: 'the tool_use event\'s content is [text "", tool_use]',
    sent: (body) =>
      some(body, 'assistant', (blocks) => blocks.some(isBlank) && blocks.some((block) => block?.type === 'tool_use')),
    apply: (jsonl) =>
      edit(jsonl, isCallEvent, (event) => withContent(event, [{ type: 'text', text: '' }, ...event.message.content])),
  },
  {
    name: 'whitespace-text-beside-tool-result',
    rule: 'text-block-empty',
    what: "the tool_result event's content is [tool_result, text of only whitespace]",
    sent: (body) =>
      some(body, 'user', (blocks) => blocks.some(isBlank) && blocks.some((block) => block?.type === 'tool_result')),
    apply: (jsonl) =>
      edit(jsonl, isResultEvent, (event) =>
        withContent(event, [...event.message.content, { type: 'text', text: '\n' }]),
      ),
  },
  {
    name: 'text-before-tool-result',
    rule: 'tool-result-not-first',
    what: "the tool_result event's content is [text, tool_result]: the result is not at the start of the message",
    sent: (body) =>
      some(
        body,
        'user',
        (blocks) => blocks[0]?.type === 'text' && blocks.some((block) => block?.type === 'tool_result'),
      ),
    apply: (jsonl) =>
      edit(jsonl, isResultEvent, (event) =>
        withContent(event, [{ type: 'text', text: 'Here is the file.' }, ...event.message.content]),
      ),
  },
  {
    name: 'tool-use-in-user-message',
    rule: 'tool-use-wrong-role',
    what: 'a tool_use block inside the user message that carries the tool_result',
    sent: (body) => some(body, 'user', (blocks) => blocks.some((block) => block?.type === 'tool_use')),
    apply: (jsonl) =>
      edit(jsonl, isResultEvent, (event) =>
        withContent(event, [
          ...event.message.content,
          { type: 'tool_use', id: 'toolu_e2e_wrong_role', name: 'Read', input: { file_path: '/dev/null' } },
        ]),
      ),
  },
  {
    name: 'result-for-another-id',
    rule: 'tool-result-id-mismatch',
    what: "the tool_result's tool_use_id names a call that is not there",
    sent: (body) =>
      some(body, 'user', (blocks) =>
        blocks.some((block) => block?.type === 'tool_result' && block.tool_use_id === 'toolu_e2e_elsewhere'),
      ),
    apply: (jsonl) =>
      edit(jsonl, isResultEvent, (event) =>
        withContent(
          event,
          event.message.content.map((block: any) =>
            block?.type === 'tool_result' ? { ...block, tool_use_id: 'toolu_e2e_elsewhere' } : block,
          ),
        ),
      ),
  },
  {
    name: 'tool-use-twice-in-one-message',
    rule: 'tool-call-id-duplicate',
    what: "the tool_use event's content holds the same tool_use twice (one id, two blocks)",
    sent: (body) =>
      some(body, 'assistant', (blocks) => {
        const ids = blocks.filter((block) => block?.type === 'tool_use').map((block) => block.id);
        return new Set(ids).size < ids.length;
      }),
    apply: (jsonl) =>
      edit(jsonl, isCallEvent, (event) =>
        withContent(event, [
          ...event.message.content,
          ...event.message.content.filter((block: any) => block?.type === 'tool_use'),
        ]),
      ),
  },
  {
    name: 'tool-input-as-string',
    rule: 'tool-call-arguments-invalid-json',
    what: "the tool_use's input is a JSON string, not an object (a client that stored the arguments text)",
    sent: (body) =>
      some(body, 'assistant', (blocks) =>
        blocks.some((block) => block?.type === 'tool_use' && typeof block.input === 'string'),
      ),
    apply: (jsonl) =>
      edit(jsonl, isCallEvent, (event) =>
        withContent(
          event,
          event.message.content.map((block: any) =>
            block?.type === 'tool_use' ? { ...block, input: JSON.stringify(block.input) } : block,
          ),
        ),
      ),
  },
  {
    name: 'whitespace-text-in-recorded-request',
    rule: 'text-block-empty',
    what: 'a whitespace-only text block added to a user message Claude Code recorded as sent (an api-request-blob line, which resume replays)',
    sent: (body) => some(body, 'user', (blocks) => blocks.some(isBlank)),
    apply: (jsonl) =>
      edit(
        jsonl,
        (event) =>
          event?.type === 'api-request-blob' && event.message?.role === 'user' && Array.isArray(event.message?.content),
        (event) => withContent(event, [...event.message.content, { type: 'text', text: ' ' }]),
      ),
  },
];

function parse(line: string): Event | undefined {
  if (line.trim() === '') return undefined;
  try {
    return JSON.parse(line) as Event;
  } catch {
    return undefined;
  }
}

/** Replaces the first line whose event matches with the transformed event. */
function edit(
  jsonl: string,
  matches: (event: Event | undefined) => boolean,
  transform: (event: Event) => Event,
): Poisoned {
  return insertBefore(jsonl, matches, (event) => [transform(event)]);
}

/** Replaces the first line whose event matches with the events `transform` gives (the lines around it untouched). */
function insertBefore(
  jsonl: string,
  matches: (event: Event | undefined) => boolean,
  transform: (event: Event) => Event[],
): Poisoned {
  const lines = jsonl.split('\n');
  for (let index = 0; index < lines.length; index += 1) {
    const event = parse(lines[index] as string);
    if (event === undefined || !matches(event)) continue;
    const replaced = transform(event).map((next) => JSON.stringify(next));
    lines.splice(index, 1, ...replaced);
    return { text: lines.join('\n'), lines: replaced.map((_, offset) => index + 1 + offset) };
  }
  throw new Error('the session file has no event of the kind this poisoning changes');
}
