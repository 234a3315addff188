import { isJsonObjectText } from '../tool-call-shape.js';
import type { Rule } from './rule.js';

/** DashScope (and vLLM/llama.cpp templates) json-parse replayed arguments: they must be a JSON object. */
export const toolCallArgumentsInvalidJson: Rule = {
  id: 'tool-call-arguments-invalid-json',
  sources: [
    'CATALOGUE dashscope/tool-call-arguments-invalid-json: https://github.com/HKUDS/nanobot/issues/2469',
    'CATALOGUE hf-chat-template/tool-call-arguments-invalid-json: https://github.com/vllm-project/vllm/issues/43995',
    'CATALOGUE xai/tool-call-arguments-invalid-json (an empty string is rejected; use {})',
  ],
  wording: {
    openai: () => 'Failed to parse tool call arguments as JSON',
    qwen: () =>
      '<400> InternalError.Algo.InvalidParameter: The "function.arguments" parameter of the code model must be in JSON format.',
  },
  roles: ['assistant'],
  visit(message, index, context) {
    if (message.role !== 'assistant' || !Array.isArray(message.tool_calls)) return;
    for (const call of message.tool_calls) {
      const args = call?.function?.arguments;
      if (args !== undefined && (typeof args !== 'string' || !isJsonObjectText(args))) {
        context.report({
          rule: 'tool-call-arguments-invalid-json',
          index,
          ...(typeof call.id === 'string' ? { toolCallId: call.id } : {}),
        });
      }
    }
  },
};
