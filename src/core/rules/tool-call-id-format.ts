import type { Rule } from './rule.js';

/** Mistral: call ids (in calls and results) must be exactly nine letters or digits. */
export const toolCallIdFormat: Rule = {
  id: 'tool-call-id-format',
  sources: [
    'CATALOGUE mistral/tool-call-id-format: https://github.com/karthink/gptel/issues/1203, https://github.com/editor-code-assistant/eca/issues/233',
  ],
  wording: {
    openai: (f) => `Tool call id was ${f.toolCallId ?? ''} but must be a-z, A-Z, 0-9, with a length of 9.`,
  },
  roles: ['assistant', 'tool'],
  visit(message, index, context) {
    const pattern = context.profile.idPattern;
    if (pattern === undefined) return;
    if (message.role === 'assistant' && Array.isArray(message.tool_calls)) {
      for (const call of message.tool_calls) {
        if (typeof call?.id === 'string' && call.id !== '' && !pattern.test(call.id))
          context.report({ rule: 'tool-call-id-format', index, toolCallId: call.id });
      }
    } else if (
      message.role === 'tool' &&
      typeof message.tool_call_id === 'string' &&
      message.tool_call_id !== '' &&
      !pattern.test(message.tool_call_id)
    ) {
      context.report({ rule: 'tool-call-id-format', index, toolCallId: message.tool_call_id });
    }
  },
};
