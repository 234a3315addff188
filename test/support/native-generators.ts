import fc from 'fast-check';
import type { FormatName } from '../../src/index.js';

/**
 * Valid native histories for each format, and the damage agents do to them (an element dropped,
 * repeated or wedged in, blocks lost or emptied, the head cut off, junk in the array).
 */
const word = fc.constantFrom(
  'alpha',
  'beta',
  'read',
  'the',
  'file',
  '42',
  'émoji 🚀',
  'line\nbreak',
  '<system-reminder>x</system-reminder>',
);
const sentence = fc.array(word, { minLength: 1, maxLength: 4 }).map((words) => words.join(' '));
const input = fc.constantFrom<Record<string, unknown>>({ path: 'a.ts' }, { q: 'x' }, {}, { n: 1 });
// `kind` is read by the Responses builder only: the call kinds the client answers there.
const callSpec = fc.record({
  name: fc.constantFrom('read_file', 'search', 'run'),
  input,
  result: sentence,
  kind: fc.constantFrom('function', 'function', 'custom', 'local_shell', 'tool_search'),
});
const round = fc.record({
  text: fc.option(sentence, { nil: undefined }),
  thinking: fc.boolean(),
  calls: fc.array(callSpec, { minLength: 1, maxLength: 3 }),
  after: fc.option(sentence, { nil: undefined }),
  reversed: fc.boolean(),
  // Responses only: an MCP call (it carries its output) or an MCP approval asked and answered, after the round.
  mcp: fc.constantFrom('none', 'none', 'call', 'approval'),
});
const turn = fc.record({
  user: sentence,
  asBlocks: fc.boolean(),
  rounds: fc.array(round, { maxLength: 3 }),
  answer: sentence,
});
const turns = fc.array(turn, { minLength: 1, maxLength: 4 });

export function validNative(format: FormatName): fc.Arbitrary<unknown[]> {
  if (format === 'anthropic-messages') return turns.map(buildAnthropic);
  if (format === 'gemini-contents') return fc.tuple(turns, fc.boolean()).map(([value, ids]) => buildGemini(value, ids));
  return turns.map(buildResponses);
}

type Turn = typeof turn extends fc.Arbitrary<infer T> ? T : never;

function buildAnthropic(value: Turn[]): unknown[] {
  const messages: unknown[] = [];
  let counter = 0;
  for (const entry of value) {
    messages.push({ role: 'user', content: entry.asBlocks ? [{ type: 'text', text: entry.user }] : entry.user });
    for (const step of entry.rounds) {
      const ids = step.calls.map(() => `toolu_${++counter}`);
      const blocks: unknown[] = [];
      if (step.thinking) blocks.push({ type: 'thinking', thinking: 'considering', signature: `sig${counter}` });
      if (step.text !== undefined) blocks.push({ type: 'text', text: step.text });
      for (const [position, call] of step.calls.entries()) {
        blocks.push({ type: 'tool_use', id: ids[position], name: call.name, input: call.input });
      }
      messages.push({ role: 'assistant', content: blocks });
      const results = step.calls.map((call, position) => ({
        type: 'tool_result',
        tool_use_id: ids[position],
        content: call.result,
      }));
      messages.push({
        role: 'user',
        content: [
          ...(step.reversed ? results.reverse() : results),
          ...(step.after === undefined ? [] : [{ type: 'text', text: step.after }]),
        ],
      });
    }
    messages.push({
      role: 'assistant',
      content: entry.asBlocks ? [{ type: 'text', text: entry.answer }] : entry.answer,
    });
  }
  return messages;
}

function buildGemini(value: Turn[], withIds: boolean): unknown[] {
  const contents: unknown[] = [];
  let counter = 0;
  for (const entry of value) {
    contents.push({ role: 'user', parts: [{ text: entry.user }] });
    for (const step of entry.rounds) {
      const ids = step.calls.map(() => `call_${++counter}`);
      const parts: unknown[] = [];
      if (step.text !== undefined) parts.push({ text: step.text, ...(step.thinking ? { thought: true } : {}) });
      for (const [position, call] of step.calls.entries()) {
        parts.push({
          functionCall: { ...(withIds ? { id: ids[position] } : {}), name: call.name, args: call.input },
          ...(step.thinking && position === 0 ? { thoughtSignature: 'c2ln' } : {}),
        });
      }
      contents.push({ role: 'model', parts });
      contents.push({
        role: 'user',
        parts: step.calls.map((call, position) => ({
          functionResponse: {
            ...(withIds ? { id: ids[position] } : {}),
            name: call.name,
            response: { output: call.result },
          },
        })),
      });
      if (step.after !== undefined) contents.push({ role: 'user', parts: [{ text: step.after }] });
    }
    contents.push({ role: 'model', parts: [{ text: entry.answer }] });
  }
  return contents;
}

function buildResponses(value: Turn[]): unknown[] {
  const items: unknown[] = [];
  let counter = 0;
  for (const entry of value) {
    items.push(
      entry.asBlocks
        ? { type: 'message', role: 'user', content: [{ type: 'input_text', text: entry.user }] }
        : { role: 'user', content: entry.user },
    );
    for (const step of entry.rounds) {
      const ids = step.calls.map(() => `call_${++counter}`);
      if (step.thinking) items.push({ type: 'reasoning', id: `rs_${counter}`, summary: [], encrypted_content: 'gAAA' });
      for (const [position, call] of step.calls.entries()) items.push(responsesCall(call, ids[position] as string));
      if (step.after !== undefined) items.push({ type: 'message', role: 'user', content: step.after });
      const outputs = step.calls.map((call, position) => responsesOutput(call, ids[position] as string));
      items.push(...(step.reversed ? outputs.reverse() : outputs));
      if (step.mcp === 'call')
        items.push({
          type: 'mcp_call',
          id: `mcp_${counter}`,
          server_label: 'docs',
          name: 'lookup',
          arguments: '{"q":"x"}',
          output: step.calls[0]?.result ?? 'none',
        });
      if (step.mcp === 'approval')
        items.push(
          {
            type: 'mcp_approval_request',
            id: `mcpr_${counter}`,
            server_label: 'docs',
            name: 'lookup',
            arguments: '{}',
          },
          { type: 'mcp_approval_response', approval_request_id: `mcpr_${counter}`, approve: true },
        );
    }
    items.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: entry.answer }] });
  }
  return items;
}

type CallSpec = Turn['rounds'][number]['calls'][number];

/** A call of its kind (OpenAI's input item shapes: function_call, custom_tool_call, local_shell_call, tool_search_call). */
function responsesCall(call: CallSpec, id: string): Record<string, unknown> {
  switch (call.kind) {
    case 'custom':
      return {
        type: 'custom_tool_call',
        id: `ctc_${id}`,
        call_id: id,
        name: call.name,
        input: JSON.stringify(call.input),
      };
    case 'local_shell':
      return {
        type: 'local_shell_call',
        id: `lsh_${id}`,
        call_id: id,
        status: 'completed',
        action: { type: 'exec', command: ['cat', JSON.stringify(call.input)], env: {} },
      };
    case 'tool_search':
      return { type: 'tool_search_call', id: `ts_${id}`, call_id: id, execution: 'client', arguments: call.input };
    default:
      return {
        type: 'function_call',
        id: `fc_${id}`,
        call_id: id,
        name: call.name,
        arguments: JSON.stringify(call.input),
      };
  }
}

/** The output that answers it (a local shell call is answered as Codex answers it, or with a local_shell_call_output). */
function responsesOutput(call: CallSpec, id: string): Record<string, unknown> {
  switch (call.kind) {
    case 'custom':
      return { type: 'custom_tool_call_output', call_id: id, output: call.result };
    case 'local_shell':
      return call.name === 'run'
        ? { type: 'local_shell_call_output', id, output: call.result }
        : { type: 'function_call_output', call_id: id, output: call.result };
    case 'tool_search':
      return {
        type: 'tool_search_output',
        call_id: id,
        execution: 'client',
        tools: [{ type: 'function', name: call.result }],
      };
    default:
      return { type: 'function_call_output', call_id: id, output: call.result };
  }
}

type Damage =
  | {
      op:
        | 'drop'
        | 'duplicate'
        | 'wedge'
        | 'empty-text'
        | 'drop-block'
        | 'reverse-blocks'
        | 'split'
        | 'junk'
        | 'swap'
        | 'strip-id';
      at: number;
      block: number;
    }
  | { op: 'head'; at: number; block: number };

const damage: fc.Arbitrary<Damage> = fc.record({
  op: fc.constantFrom(
    'drop',
    'duplicate',
    'wedge',
    'empty-text',
    'drop-block',
    'reverse-blocks',
    'split',
    'junk',
    'swap',
    'head',
    'strip-id',
  ),
  at: fc.nat({ max: 40 }),
  block: fc.nat({ max: 4 }),
}) as fc.Arbitrary<Damage>;

/** A valid history and the same history damaged 1-3 times. */
export function damagedNative(format: FormatName): fc.Arbitrary<{ valid: unknown[]; damaged: unknown[] }> {
  return fc.tuple(validNative(format), fc.array(damage, { minLength: 1, maxLength: 3 })).map(([valid, damages]) => {
    let damaged = valid.slice();
    for (const step of damages) damaged = apply(format, damaged, step);
    return { valid, damaged };
  });
}

function blocksKey(format: FormatName): string {
  return format === 'gemini-contents' ? 'parts' : 'content';
}

function apply(format: FormatName, items: unknown[], step: Damage): unknown[] {
  if (items.length === 0) return items;
  const at = step.at % items.length;
  const target = items[at] as Record<string, unknown>;
  const out = items.slice();
  const key = blocksKey(format);
  const blocks =
    target !== null && typeof target === 'object' && Array.isArray(target[key])
      ? (target[key] as unknown[])
      : undefined;
  switch (step.op) {
    case 'drop':
      out.splice(at, 1);
      return out;
    case 'duplicate':
      out.splice(at, 0, target);
      return out;
    case 'wedge':
      out.splice(
        at,
        0,
        format === 'gemini-contents'
          ? { role: 'user', parts: [{ text: 'wedged note' }] }
          : format === 'anthropic-messages'
            ? { role: 'user', content: 'wedged note' }
            : { type: 'message', role: 'user', content: 'wedged note' },
      );
      return out;
    case 'junk':
      out.splice(at, 0, step.block % 2 === 0 ? 42 : null);
      return out;
    case 'swap':
      if (at + 1 < out.length) [out[at], out[at + 1]] = [out[at + 1], out[at]];
      return out;
    case 'head':
      return out.slice(Math.min(at, out.length - 1) || 1);
    case 'empty-text':
      if (format === 'responses-input') out.push({ type: 'reasoning', id: `rs_dangling_${at}`, summary: [] });
      else if (blocks !== undefined)
        out[at] = {
          ...target,
          [key]: [format === 'gemini-contents' ? { text: '' } : { type: 'text', text: '' }, ...blocks],
        };
      return out;
    case 'drop-block':
      if (blocks !== undefined && blocks.length > 0)
        out[at] = { ...target, [key]: blocks.filter((_, position) => position !== step.block % blocks.length) };
      return out;
    case 'reverse-blocks':
      if (blocks !== undefined) out[at] = { ...target, [key]: blocks.slice().reverse() };
      return out;
    case 'strip-id':
      // A call or result that lost its id (a client that never stored it).
      if (format === 'responses-input') {
        if (target !== null && typeof target === 'object' && 'call_id' in target) {
          const { call_id: _id, ...rest } = target;
          out[at] = rest;
        }
      } else if (blocks !== undefined) {
        out[at] = {
          ...target,
          [key]: blocks.map((block) => {
            if (block === null || typeof block !== 'object') return block;
            const record = block as Record<string, unknown>;
            if (record['type'] === 'tool_use') return { ...record, id: undefined };
            if (record['type'] === 'tool_result') return { ...record, tool_use_id: undefined };
            for (const name of ['functionCall', 'functionResponse']) {
              const inner = record[name] as Record<string, unknown> | undefined;
              if (inner !== undefined) {
                const { id: _id, ...rest } = inner;
                return { ...record, [name]: rest };
              }
            }
            return block;
          }),
        };
      }
      return out;
    case 'split':
      if (blocks !== undefined && blocks.length > 1) {
        const cut = 1 + (step.block % (blocks.length - 1));
        out.splice(at, 1, { ...target, [key]: blocks.slice(0, cut) }, { ...target, [key]: blocks.slice(cut) });
      }
      return out;
  }
}
