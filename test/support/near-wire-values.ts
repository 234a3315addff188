import fc from 'fast-check';

/** Values near the wires: the keys and words they use, nested, so the recognisers are tried at their edges. */
const word = fc.constantFrom(
  'user',
  'assistant',
  'model',
  'system',
  'tool',
  'function',
  'message',
  'function_call',
  'function_call_output',
  'text',
  'tool_use',
  'tool_result',
  'thinking',
  'step-start',
  'x',
);
const key = fc.constantFrom(
  'role',
  'content',
  'parts',
  'type',
  'text',
  'tool_calls',
  'tool_call_id',
  'call_id',
  'name',
  'arguments',
  'output',
  'functionCall',
  'functionResponse',
  'thought',
  'info',
  'messages',
  'contents',
  'input',
  'system',
  'id',
);
export const { near } = fc.letrec((tie) => ({
  near: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    word,
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('near'), { maxLength: 4 }),
    fc.dictionary(key, tie('near'), { maxKeys: 5 }),
  ),
}));
