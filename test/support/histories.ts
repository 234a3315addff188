import fc from 'fast-check';
import type { Message, ProfileName, ToolCall } from '../../src/index.js';

/**
 * Valid histories for a profile, and the corruptions agents really suffer. Ids are unique per
 * history (valid everywhere) unless `reuseIds` asks for Ollama-style `call_0` every turn.
 */
export interface Shape {
  profile: ProfileName;
  reasoning: boolean;
  mistralIds: boolean;
  reuseIds: boolean;
  /** Tool-call turns may carry content null (everywhere but Groq and chat templates, which need a string). */
  nullContent: boolean;
}

export function shapeOf(profile: ProfileName): Shape {
  return {
    profile,
    reasoning: profile === 'deepseek' || profile === 'moonshot',
    mistralIds: profile === 'mistral',
    reuseIds: profile === 'openai' || profile === 'qwen' || profile === 'local',
    nullContent: profile !== 'groq' && profile !== 'local',
  };
}

const word = fc.constantFrom(
  'alpha',
  'beta',
  'gamma',
  'delta',
  'read',
  'the',
  'file',
  'ok',
  '42',
  'émoji 🚀',
  'line\nbreak',
  '<!-- nf-msg eyJ9 -->',
  '',
);
const sentence = fc.array(word, { minLength: 1, maxLength: 5 }).map((words) => words.join(' ').trim() || 'text');

interface Turn {
  user: string;
  rounds: { calls: { name: string; args: string; result: string }[]; text: string; reasoning: string }[];
  answer: string;
  answerReasoning: string;
}

const call = fc.record({
  name: fc.constantFrom('read_file', 'search', 'run'),
  args: fc.constantFrom('{"path":"a.ts"}', '{"q":"x"}', '{}', '{"n":1}'),
  result: sentence,
});
const turn: fc.Arbitrary<Turn> = fc.record({
  user: sentence,
  rounds: fc.array(
    fc.record({
      calls: fc.array(call, { minLength: 1, maxLength: 3 }),
      text: fc.oneof(fc.constant(''), sentence),
      reasoning: sentence,
    }),
    { maxLength: 3 },
  ),
  answer: sentence,
  answerReasoning: sentence,
});

export function validHistory(shape: Shape): fc.Arbitrary<Message[]> {
  return fc
    .record({ system: fc.option(sentence, { nil: undefined }), turns: fc.array(turn, { minLength: 1, maxLength: 5 }) })
    .map(({ system, turns }) => build(shape, system, turns));
}

function build(shape: Shape, system: string | undefined, turns: Turn[]): Message[] {
  const messages: Message[] = [];
  let counter = 0;
  const nextId = (position: number) => {
    counter += 1;
    if (shape.mistralIds) return `id${String(counter).padStart(7, '0')}`;
    return shape.reuseIds && counter % 3 === 0 ? `call_${position}` : `call_${counter}_x`;
  };
  if (system !== undefined) messages.push({ role: 'system', content: system });
  turns.forEach((entry, turnIndex) => {
    messages.push({ role: 'user', content: `${entry.user} (${turnIndex})` });
    for (const round of entry.rounds) {
      const ids = round.calls.map((_, position) => nextId(position));
      // Reused ids must still be unique within one message.
      const unique = new Set(ids).size === ids.length ? ids : ids.map((id, position) => `${id}_${position}`);
      const toolCalls: ToolCall[] = round.calls.map((c, position) => ({
        id: unique[position] as string,
        type: 'function',
        function: { name: c.name, arguments: c.args },
      }));
      const assistant: Message = {
        role: 'assistant',
        content: round.text === '' ? (shape.nullContent ? null : '') : round.text,
        tool_calls: toolCalls,
      };
      if (shape.reasoning) assistant.reasoning_content = round.reasoning;
      messages.push(assistant);
      for (const [position, c] of round.calls.entries()) {
        messages.push({ role: 'tool', tool_call_id: unique[position] as string, content: c.result });
      }
    }
    const answer: Message = { role: 'assistant', content: entry.answer };
    if (shape.reasoning) answer.reasoning_content = entry.answerReasoning;
    messages.push(answer);
  });
  return messages;
}

/** What agents suffer: each takes a history and a position seed and returns the damaged copy. */
export type Corruption = (messages: Message[], seed: number) => Message[];

const toolIndexes = (messages: Message[]) =>
  messages.flatMap((message, index) => (message.role === 'tool' ? [index] : []));
const callIndexes = (messages: Message[]) =>
  messages.flatMap((message, index) =>
    message.role === 'assistant' && (message.tool_calls?.length ?? 0) > 0 ? [index] : [],
  );
const pick = (indexes: number[], seed: number) => (indexes.length === 0 ? undefined : indexes[seed % indexes.length]);

export const corruptions: Record<string, Corruption> = {
  dropResult(messages, seed) {
    const at = pick(toolIndexes(messages), seed);
    return at === undefined ? messages : messages.filter((_, index) => index !== at);
  },
  crashAfterCall(messages, seed) {
    const at = pick(callIndexes(messages), seed);
    return at === undefined ? messages : [...messages.slice(0, at + 1), { role: 'user', content: 'are you there?' }];
  },
  insertIntoBlock(messages, seed) {
    const at = pick(toolIndexes(messages), seed);
    if (at === undefined) return messages;
    const wedge: Message =
      seed % 2 === 0 ? { role: 'user', content: 'hint: stop looping' } : { role: 'system', content: 'reminder' };
    return [...messages.slice(0, at), wedge, ...messages.slice(at)];
  },
  duplicateResult(messages, seed) {
    const at = pick(toolIndexes(messages), seed);
    return at === undefined
      ? messages
      : [...messages.slice(0, at + 1), { ...(messages[at] as Message) }, ...messages.slice(at + 1)];
  },
  duplicateUser(messages, seed) {
    const at = pick(
      messages.flatMap((message, index) => (message.role === 'user' ? [index] : [])),
      seed,
    );
    return at === undefined
      ? messages
      : [...messages.slice(0, at + 1), { ...(messages[at] as Message) }, ...messages.slice(at + 1)];
  },
  splitParallel(messages, seed) {
    const at = pick(
      callIndexes(messages).filter((index) => (messages[index]?.tool_calls?.length ?? 0) > 1),
      seed,
    );
    if (at === undefined) return messages;
    const original = messages[at] as Message;
    const calls = original.tool_calls ?? [];
    const first: Message = { ...original, tool_calls: calls.slice(0, 1) };
    const second: Message = { ...original, content: null, tool_calls: calls.slice(1) };
    delete second.reasoning_content;
    return [...messages.slice(0, at), first, second, ...messages.slice(at + 1)];
  },
  loseIds(messages, seed) {
    const at = pick(callIndexes(messages), seed);
    if (at === undefined) return messages;
    const copy = messages.slice();
    const assistant = copy[at] as Message;
    copy[at] = { ...assistant, tool_calls: (assistant.tool_calls ?? []).map(({ id: _id, ...rest }) => rest) };
    for (let index = at + 1; index < copy.length && copy[index]?.role === 'tool'; index += 1) {
      const { tool_call_id: _gone, ...rest } = copy[index] as Message;
      copy[index] = rest as Message;
    }
    return copy;
  },
  truncateHead(messages, seed) {
    const at = pick(toolIndexes(messages), seed);
    return at === undefined ? messages : messages.slice(at);
  },
  shuffleBlock(messages, seed) {
    const at = pick(callIndexes(messages), seed);
    if (at === undefined) return messages;
    let end = at + 1;
    while (messages[end]?.role === 'tool') end += 1;
    const block = messages.slice(at, end);
    const rotated = [
      ...block.slice(1 + (seed % Math.max(1, block.length - 1))),
      ...block.slice(0, 1 + (seed % Math.max(1, block.length - 1))),
    ];
    return [...messages.slice(0, at), ...rotated, ...messages.slice(end)];
  },
  emptyAssistant(messages, seed) {
    const at = seed % (messages.length + 1);
    return [...messages.slice(0, at), { role: 'assistant', content: null }, ...messages.slice(at)];
  },
  emptyToolCalls(messages, seed) {
    const at = pick(
      messages.flatMap((message, index) =>
        message.role === 'assistant' && message.tool_calls === undefined ? [index] : [],
      ),
      seed,
    );
    if (at === undefined) return messages;
    const copy = messages.slice();
    copy[at] = { ...(copy[at] as Message), tool_calls: [] };
    return copy;
  },
  ghostAssistant(messages, seed) {
    // NexForgeCLI 0.4.0: a marker inside content decoded as an extra assistant message inside a tool block.
    const at = pick(toolIndexes(messages), seed);
    return at === undefined
      ? messages
      : [
          ...messages.slice(0, at),
          { role: 'assistant', content: 'ghost from a dumped session file' },
          ...messages.slice(at),
        ];
  },
  developerRole(messages, seed) {
    const at = seed % (messages.length + 1);
    return [...messages.slice(0, at), { role: 'developer', content: 'be brief' }, ...messages.slice(at)];
  },
  flattenCall(messages, seed) {
    const at = pick(callIndexes(messages), seed);
    if (at === undefined) return messages;
    const copy = messages.slice();
    const assistant = copy[at] as Message;
    copy[at] = {
      ...assistant,
      tool_calls: (assistant.tool_calls ?? []).map(
        (c) => ({ id: c.id, name: c.function?.name, arguments: c.function?.arguments }) as ToolCall,
      ),
    };
    return copy;
  },
  truncateArguments(messages, seed) {
    const at = pick(callIndexes(messages), seed);
    if (at === undefined) return messages;
    const copy = messages.slice();
    const assistant = copy[at] as Message;
    copy[at] = {
      ...assistant,
      tool_calls: (assistant.tool_calls ?? []).map((c, i) =>
        i === 0 ? { ...c, function: { ...c.function, arguments: '{"path":"a.t' } } : c,
      ),
    };
    return copy;
  },
  foreignIdFormat(messages, seed) {
    // A history made with another provider's ids (call_… or toolu_…), replayed to one with its own format.
    const at = pick(callIndexes(messages), seed);
    if (at === undefined) return messages;
    const copy = messages.slice();
    const assistant = copy[at] as Message;
    const renamed = new Map((assistant.tool_calls ?? []).map((c, i) => [c.id, `toolu_${seed}_${i}`]));
    copy[at] = {
      ...assistant,
      tool_calls: (assistant.tool_calls ?? []).map((c) => ({ ...c, id: renamed.get(c.id) as string })),
    };
    for (let index = at + 1; index < copy.length && copy[index]?.role === 'tool'; index += 1) {
      const result = copy[index] as Message;
      copy[index] = { ...result, tool_call_id: renamed.get(result.tool_call_id) ?? (result.tool_call_id as string) };
    }
    return copy;
  },
  partsOrphan(messages, seed) {
    const at = seed % (messages.length + 1);
    return [
      ...messages.slice(0, at),
      { role: 'tool', tool_call_id: 'call_gone', content: [{ type: 'text', text: 'result from a truncated turn' }] },
      ...messages.slice(at),
    ];
  },
  stripReasoning(messages, seed) {
    const at = pick(callIndexes(messages), seed);
    if (at === undefined) return messages;
    const copy = messages.slice();
    const { reasoning_content: _gone, ...rest } = copy[at] as Message;
    copy[at] = rest as Message;
    return copy;
  },
};

export const corruptionNames = Object.keys(corruptions);

export function corrupted(shape: Shape): fc.Arbitrary<{ original: Message[]; damaged: Message[]; applied: string[] }> {
  return fc
    .tuple(
      validHistory(shape),
      fc.array(fc.tuple(fc.constantFrom(...corruptionNames), fc.nat()), { minLength: 1, maxLength: 3 }),
    )
    .map(([original, steps]) => {
      let damaged = original;
      for (const [name, seed] of steps) damaged = (corruptions[name] as Corruption)(damaged, seed);
      return { original, damaged, applied: steps.map(([name]) => name) };
    });
}
