import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  BlockAssembler,
  CallId,
  createUserMessage,
  deepFreeze,
  type GenerateOptions,
  markAgentLoopRequest,
  type StreamChunk,
} from '@deepseek-ai/dsh-llm';
import { check } from '../../../src/core/index.js';
import { toWire } from '../src/to-wire.js';
import { crashedSession, createAgent, createSession, type Host, MODEL, PROVIDER, useHosts } from './harness.js';

const host = useHosts();

async function* answer(chunks: StreamChunk[]): AsyncIterable<StreamChunk> {
  for (const chunk of chunks) yield chunk;
}

async function stream(
  target: Host,
  options: GenerateOptions,
  chunks: StreamChunk[] = [{ type: 'finish', reason: { kind: 'stop' } }],
): Promise<BlockAssembler> {
  const assembler = new BlockAssembler();
  for await (const chunk of await target.ctx.waterfall('llm/stream', options, () => answer(chunks)))
    assembler.push(chunk);
  return assembler;
}

async function crashedMessages() {
  const agent = createAgent(createSession());
  await crashedSession(await host({ enabled: false }), agent);
  return agent.session.deriveMessages();
}

function toolCallChunks(index: number, id: string, name: string): StreamChunk[] {
  return [
    { type: 'block-start', index, blockType: 'tool-call' },
    { type: 'tool-call-delta', index, id: CallId(id), name, argumentsDelta: '{}' },
    { type: 'block-end', index, block: { type: 'tool-call', id: CallId(id), name, arguments: '{}' } },
  ];
}

describe('llm/stream (checkEveryRequest)', () => {
  it('only warns about a frozen loop request: its messages stay the very same objects', async () => {
    const messages = [
      ...(await crashedMessages()),
      createUserMessage({ content: [{ type: 'text', text: 'continue' }], source: { kind: 'user' } }),
    ];
    const request = markAgentLoopRequest(deepFreeze({ provider: PROVIDER, model: MODEL, messages }));
    const before = [...request.messages];
    const target = await host();
    await stream(target, request);
    assert.equal(request.messages.length, before.length);
    request.messages.forEach((message, index) => {
      assert.equal(message, before[index]);
    });
    const warnings = target.logs.filter((record) => record.name === 'unstuck-dsh' && record.type === 'warn');
    assert.equal(warnings.length, 1);
    assert.match(
      warnings[0]!.text,
      /^loop request has 1 problem\(s\) the provider may reject \(tool-calls-unanswered\); it is frozen/,
    );
    assert.doesNotMatch(
      JSON.stringify(target.logs),
      /write a\.txt|Writing it now|I should write/,
      'no message contents in the logs',
    );
  });

  it('leaves the frozen session-title request alone too (frozen but not loop-marked)', async () => {
    const messages = await crashedMessages();
    const request = deepFreeze({
      provider: PROVIDER,
      model: MODEL,
      messages: [
        ...messages,
        createUserMessage({ content: [{ type: 'text', text: 'title?' }], source: { kind: 'user' } }),
      ],
      purpose: 'session-title' as const,
    });
    const before = [...request.messages];
    await stream(await host(), request);
    request.messages.forEach((message, index) => {
      assert.equal(message, before[index]);
    });
  });

  it("repairs compaction's request in place: same array, legal for DeepSeek, reasoning kept", async () => {
    const messages = [
      ...(await crashedMessages()),
      createUserMessage({ content: [{ type: 'text', text: 'Summarize the conversation.' }], source: { kind: 'user' } }),
    ];
    const request: GenerateOptions = { provider: PROVIDER, model: MODEL, messages, purpose: 'compaction' };
    assert.notDeepEqual(
      check(toWire(request.messages).messages, { profile: 'deepseek', scope: 'request', model: MODEL }),
      [],
    );
    const target = await host();
    await stream(target, request);
    assert.equal(request.messages, messages, 'the same array, changed in place');
    assert.ok(
      target.logs.some(
        (record) =>
          record.type === 'info' &&
          /^compaction request repaired in place \(tool-calls-unanswered\)$/.test(record.text),
      ),
    );
    const wire = toWire(request.messages).messages;
    assert.deepEqual(check(wire, { profile: 'deepseek', scope: 'request', model: MODEL }), []);
    assert.equal(wire.find((message) => message.role === 'assistant')?.reasoning_content, 'I should write the file.');
    assert.equal(wire[wire.length - 1]!.content, 'Summarize the conversation.');
  });

  it('gives tool calls whose id arrived empty a stable id: the same on a retry, distinct per call, real ids kept', async () => {
    const on = await host();
    const request = markAgentLoopRequest(
      deepFreeze({
        provider: PROVIDER,
        model: MODEL,
        messages: [createUserMessage({ content: [{ type: 'text', text: 'go' }], source: { kind: 'user' } })],
        sessionId: createSession().id,
      }),
    );
    const chunks = [
      ...toolCallChunks(0, '', 'read'),
      ...toolCallChunks(1, '', 'write'),
      ...toolCallChunks(2, 'call_real', 'list'),
      { type: 'finish', reason: { kind: 'tool-calls' } } as StreamChunk,
    ];
    const ids = (assembler: BlockAssembler) =>
      assembler.blocks().map((block) => (block.type === 'tool-call' ? block.id : ''));
    const first = ids(await stream(on, request, chunks));
    const retry = ids(await stream(on, request, chunks));
    assert.match(first[0]!, /^call_unstuck_[0-9a-f]{16}$/);
    assert.match(first[1]!, /^call_unstuck_[0-9a-f]{16}$/);
    assert.notEqual(first[0], first[1]);
    assert.equal(first[2], 'call_real');
    assert.deepEqual(retry, first);
  });

  it('passes the stream through unchanged when disabled', async () => {
    const request: GenerateOptions = {
      provider: PROVIDER,
      model: MODEL,
      messages: await crashedMessages(),
      purpose: 'compaction',
    };
    const before = [...request.messages];
    const assembler = await stream(await host({ enabled: false }), request, [
      ...toolCallChunks(0, '', 'read'),
      { type: 'finish', reason: { kind: 'tool-calls' } },
    ]);
    assert.deepEqual(request.messages, before);
    const [block] = assembler.blocks();
    assert.equal(block?.type === 'tool-call' ? block.id : undefined, '');
  });
});
