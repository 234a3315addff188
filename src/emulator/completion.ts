import type { Step } from './step.js';

/** What one scripted step answers, with ids and counts already decided. */
export interface Answer {
  id: string;
  created: number;
  model: string;
  text: string;
  reasoning: string | undefined;
  toolCalls: { id: string; name: string; arguments: string }[];
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

/** How generated tool-call ids look: DeepSeek/OpenAI `call_..`, Mistral nine alphanumerics, Anthropic `toolu_..`. */
export type IdStyle = 'call' | 'mistral' | 'toolu';

export function toAnswer(
  step: Step,
  context: { sequence: number; model: string; promptChars: number; created: number; idStyle: IdStyle },
): Answer {
  const text = step.text ?? (step.toolCalls === undefined || step.toolCalls.length === 0 ? 'ok' : '');
  const toolCalls = (step.toolCalls ?? []).map((call, index) => ({
    id: call.id ?? toolCallId(context.sequence, index, context.idStyle),
    name: call.name,
    arguments: call.arguments,
  }));
  const completionChars =
    text.length +
    (step.reasoning?.length ?? 0) +
    toolCalls.reduce((sum, call) => sum + call.name.length + call.arguments.length, 0);
  // A rough chars/4 estimate: enough for clients that budget tokens by `usage`.
  const prompt = Math.ceil(context.promptChars / 4);
  const completion = Math.max(1, Math.ceil(completionChars / 4));
  return {
    id: `chatcmpl-emu-${context.sequence}`,
    created: context.created,
    model: context.model,
    text,
    reasoning: step.reasoning,
    toolCalls,
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
  };
}

/** Deterministic ids in the provider's style: DeepSeek/OpenAI `call_..`, Mistral exactly 9 alphanumerics, Anthropic `toolu_..` (`^[a-zA-Z0-9_-]+$`). */
function toolCallId(sequence: number, index: number, style: IdStyle): string {
  if (style === 'mistral') return `${sequence.toString(36)}x${index.toString(36)}`.padStart(9, '0').slice(-9);
  if (style === 'toolu') return `toolu_emu${sequence}_${String(index).padStart(2, '0')}`;
  return `call_${String(index).padStart(2, '0')}_emu${sequence}`;
}

function finishReason(answer: Answer): 'stop' | 'tool_calls' {
  return answer.toolCalls.length > 0 ? 'tool_calls' : 'stop';
}

/** The non-streaming `chat.completion` object. */
export function toCompletion(answer: Answer): unknown {
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: answer.text === '' && answer.toolCalls.length > 0 ? null : answer.text,
  };
  if (answer.reasoning !== undefined) message['reasoning_content'] = answer.reasoning;
  if (answer.toolCalls.length > 0) {
    message['tool_calls'] = answer.toolCalls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: call.arguments },
    }));
  }
  return {
    id: answer.id,
    object: 'chat.completion',
    created: answer.created,
    model: answer.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(answer) }],
    usage: answer.usage,
  };
}

/**
 * The `chat.completion.chunk` objects of a streamed answer, in the order the providers send them:
 * role first, then `reasoning_content` pieces (DeepSeek thinking mode, `content: null` beside
 * them), then content pieces, then per tool call one delta with index/id/name and the arguments in
 * pieces, then the finish chunk. DeepSeek puts `usage` on the finish chunk; OpenAI sends it in a
 * chunk of its own with `choices: []` when `stream_options.include_usage` is set.
 */
export function toChunks(
  answer: Answer,
  options: { chunkSize: number; usage: 'on-finish' | 'separate' | 'none' },
): unknown[] {
  const chunk = (
    delta: Record<string, unknown>,
    finish: string | null = null,
    extra: Record<string, unknown> = {},
  ): unknown => ({
    id: answer.id,
    object: 'chat.completion.chunk',
    created: answer.created,
    model: answer.model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...extra,
  });
  const chunks: unknown[] = [chunk({ role: 'assistant', content: '' })];
  if (answer.reasoning !== undefined) {
    for (const piece of pieces(answer.reasoning, options.chunkSize))
      chunks.push(chunk({ content: null, reasoning_content: piece }));
  }
  for (const piece of pieces(answer.text, options.chunkSize)) chunks.push(chunk({ content: piece }));
  answer.toolCalls.forEach((call, index) => {
    chunks.push(
      chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }),
    );
    for (const piece of pieces(call.arguments, options.chunkSize))
      chunks.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
  });
  chunks.push(chunk({}, finishReason(answer), options.usage === 'on-finish' ? { usage: answer.usage } : {}));
  if (options.usage === 'separate') {
    chunks.push({
      id: answer.id,
      object: 'chat.completion.chunk',
      created: answer.created,
      model: answer.model,
      choices: [],
      usage: answer.usage,
    });
  }
  return chunks;
}

function pieces(text: string, size: number): string[] {
  const result: string[] = [];
  for (let start = 0; start < text.length; start += size) result.push(text.slice(start, start + size));
  return result;
}
