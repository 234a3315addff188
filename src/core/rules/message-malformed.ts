import type { Finding, Rule } from './rule.js';

/**
 * An entry no provider can deserialise: not a message object with a string role, or content that
 * is neither a string, null, nor an array of content-part objects of a known type (e.g. a
 * number, a boolean, an object, an array of arrays, a part of type 'bogus'). What the providers
 * accept: OpenAI's chat API reference types `content` as a string or an array of content parts
 * (text, image_url, input_audio, file; refusal on assistant turns), and answers anything else with
 * "Invalid type for 'messages[0].content': expected one of a string or array of objects" or, for a
 * part type, "Invalid value: 'bogus'. Supported values are: 'text', 'image_url', 'input_audio',
 * 'refusal', 'audio', and 'file'."; DeepSeek's serde front end fails to deserialise the body. The
 * part types gateways pass on besides these are listed at PART_TYPES in messages.ts.
 */
export const messageMalformed: Rule = {
  id: 'message-malformed',
  sources: [
    'CATALOGUE deepseek/role-unknown (serde wording); CATALOGUE openai-chat/role-unknown',
    'OpenAI chat completions API reference: messages[].content is a string or an array of content parts (https://platform.openai.com/docs/api-reference/chat/create)',
  ],
  wording: {
    openai: (f) => {
      const path = String(f.facts?.['path'] ?? '');
      const got = String(f.facts?.['got'] ?? 'something else');
      if (path === '')
        return `Invalid type for 'messages[${f.index}]': expected an object with a 'role', but got ${got} instead.`;
      if (path.endsWith('.type') && got.startsWith("'"))
        return `Invalid value for 'messages[${f.index}]${path}': ${got}. Supported values are: 'text', 'image_url', 'input_audio', 'refusal', 'audio', and 'file'.`;
      if (path.endsWith('.text'))
        return `Invalid type for 'messages[${f.index}]${path}': expected a string, but got ${got} instead.`;
      return `Invalid type for 'messages[${f.index}]${path}': expected a string, null, or an array of content parts (objects with a 'type'), but got ${got} instead.`;
    },
    deepseek: (f) => {
      const path = String(f.facts?.['path'] ?? '');
      if (path === '')
        return `Failed to deserialize the JSON body into the target type: messages[${f.index}]: missing field \`role\``;
      return `Failed to deserialize the JSON body into the target type: messages[${f.index}]${path}: invalid ${String(f.facts?.['got'] ?? 'value')}, expected a string or an array of content parts`;
    },
  },
};

/** The finding for an entry whose shape is wrong, from messageShapeProblem. */
export function malformedFinding(index: number, problem: { path: string; got: string }): Finding {
  return { rule: 'message-malformed', index, facts: { path: problem.path, got: problem.got } };
}
