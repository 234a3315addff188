import { UnstuckError } from './errors.js';
import type { Profile, ProfileName } from './profile.js';
import * as rules from './rules/index.js';
import type { Violation } from './violation.js';

export type { Profile, ProfileName } from './profile.js';

// The pairing rules every OpenAI-compatible provider enforces, found by the tool-block scan.
const pairing = rules.pairingRules;

const openaiError = (violation: Violation, param: string | null = null, code: string | null = null) => ({
  status: 400,
  body: { error: { message: violation.message, type: 'invalid_request_error', param, code } },
});

const openai: Profile = {
  name: 'openai',
  dialect: 'openai',
  description: 'OpenAI chat completions (and servers that follow it: vLLM, llama.cpp, Ollama /v1, LM Studio)',
  rules: [
    ...pairing,
    rules.toolCallsEmpty,
    rules.toolCallsTooMany,
    rules.toolCallMalformed,
    rules.contentNull,
    rules.roleUnknown,
    rules.emptyMessages,
  ],
  roles: new Set(['system', 'developer', 'user', 'assistant', 'tool', 'function']),
  uniqueIdsAcrossRequest: false,
  thinkingByDefault: () => false,
  errorResponse: (violation) => openaiError(violation, `messages.[${violation.index}]`),
};

const deepseek: Profile = {
  name: 'deepseek',
  dialect: 'deepseek',
  description:
    'DeepSeek chat completions: thinking mode (reasoning_content), deepseek-reasoner, ids unique per request',
  rules: [
    ...pairing,
    rules.toolCallsEmpty,
    rules.toolCallMalformed,
    rules.contentNull,
    rules.roleUnknown,
    rules.reasoningContentMissing,
    rules.endsWithAssistant,
    rules.prefixNotLast,
    rules.rolesNotAlternating,
    rules.emptyMessages,
  ],
  roles: new Set(['system', 'user', 'assistant', 'tool', 'latest_reminder']),
  uniqueIdsAcrossRequest: true,
  // Thinking is on by default for current DeepSeek models (CATALOGUE deepseek/reasoning-content-missing notes);
  // deepseek-chat is the non-thinking alias.
  thinkingByDefault: (model) => model !== 'deepseek-chat',
  errorResponse: (violation) => ({
    status:
      violation.rule === 'role-unknown' ||
      violation.rule === 'tool-call-malformed' ||
      violation.rule === 'message-malformed'
        ? 422
        : 400,
    body: {
      error: { message: violation.message, type: 'invalid_request_error', param: null, code: 'invalid_request_error' },
    },
  }),
};

const qwen: Profile = {
  name: 'qwen',
  dialect: 'qwen',
  description: 'Qwen on DashScope (Alibaba Model Studio) OpenAI-compatible mode',
  rules: [
    ...pairing,
    rules.toolCallsEmpty,
    rules.toolCallMalformed,
    rules.toolCallArgumentsInvalidJson,
    rules.contentNull,
    rules.roleUnknown,
    rules.noUserMessage,
    rules.emptyMessages,
  ],
  roles: new Set(['system', 'assistant', 'user', 'tool', 'function']),
  uniqueIdsAcrossRequest: false,
  thinkingByDefault: () => false,
  errorResponse: (violation) => ({
    status: 400,
    body: {
      error: {
        message: violation.message,
        type: 'invalid_request_error',
        param: null,
        code: 'invalid_parameter_error',
      },
    },
  }),
};

const mistral: Profile = {
  name: 'mistral',
  dialect: 'mistral',
  description:
    'Mistral La Plateforme (and mistral-common validators): 9-character ids, no user right after a tool result',
  rules: [
    ...pairing,
    rules.toolCallsEmpty,
    rules.toolCallMalformed,
    rules.toolCallIdFormat,
    rules.toolFollowedByUser,
    rules.contentNull,
    rules.contentEmpty,
    rules.roleUnknown,
    rules.endsWithAssistant,
    rules.prefixNotLast,
    rules.emptyMessages,
  ],
  roles: new Set(['system', 'user', 'assistant', 'tool']),
  idPattern: /^[a-zA-Z0-9]{9}$/,
  uniqueIdsAcrossRequest: false,
  thinkingByDefault: () => false,
  errorResponse: (violation) => ({
    status: 400,
    body: {
      object: 'error',
      message: violation.message,
      type: 'invalid_request_message_order',
      param: null,
      code: violation.rule === 'tool-call-id-format' ? '3280' : '3230',
    },
  }),
};

const moonshot: Profile = {
  name: 'moonshot',
  dialect: 'moonshot',
  description: 'Moonshot Kimi: thinking models need reasoning_content on tool-call turns, ids unique per request',
  rules: [
    ...pairing,
    rules.toolCallsEmpty,
    rules.toolCallMalformed,
    rules.contentNull,
    rules.contentEmpty,
    rules.roleUnknown,
    rules.reasoningContentMissing,
    rules.emptyMessages,
  ],
  roles: new Set(['system', 'user', 'assistant', 'tool']),
  uniqueIdsAcrossRequest: true,
  thinkingByDefault: (model) => model === undefined || /thinking|k2\.[5-9]|k2-[5-9]|for-coding/.test(model),
  errorResponse: (violation) => ({
    status: 400,
    body: { error: { message: violation.message, type: 'invalid_request_error' } },
  }),
};

const groqFields = (extra: string[]) => new Set(['role', 'content', 'name', ...extra]);
const groq: Profile = {
  name: 'groq',
  dialect: 'groq',
  description: 'Groq: strict message schema, unknown fields (reasoning_content, ids, metadata) rejected',
  rules: [
    ...pairing,
    rules.toolCallsEmpty,
    rules.toolCallMalformed,
    rules.contentNull,
    rules.roleUnknown,
    rules.unknownMessageField,
    rules.emptyMessages,
  ],
  roles: new Set(['system', 'user', 'assistant', 'tool']),
  fields: {
    system: groqFields([]),
    user: groqFields([]),
    assistant: groqFields(['tool_calls']),
    tool: groqFields(['tool_call_id']),
  },
  // CATALOGUE groq/content-null: null content on a replayed tool-call turn was rejected (2024; may be historical, '' is safe).
  contentAlwaysRequired: true,
  assistantContentString: true,
  uniqueIdsAcrossRequest: false,
  thinkingByDefault: () => false,
  errorResponse: (violation) =>
    openaiError(violation, 'messages', violation.rule === 'unknown-message-field' ? 'invalid_request_error' : null),
};

const anthropic: Profile = {
  name: 'anthropic',
  dialect: 'openai',
  description:
    'Claude behind an OpenAI-compatible gateway (LiteLLM, Bedrock Access Gateway, OpenRouter): tool_use ids unique, one leading system message, alternating roles',
  rules: [
    ...pairing,
    rules.toolCallsEmpty,
    rules.toolCallMalformed,
    rules.contentNull,
    rules.contentEmpty,
    rules.systemMessagePosition,
    rules.rolesNotAlternating,
    rules.emptyMessages,
  ],
  roles: new Set(['system', 'user', 'assistant', 'tool']),
  strictAlternation: true,
  uniqueIdsAcrossRequest: true,
  thinkingByDefault: () => false,
  errorResponse: (violation) => ({
    status: 400,
    body: { type: 'error', error: { type: 'invalid_request_error', message: violation.message } },
  }),
};

const local: Profile = {
  name: 'local',
  dialect: 'openai',
  description:
    'Self-hosted models behind a chat template (vLLM, TGI, llama.cpp, Ollama /v1): string content, JSON-object arguments, one leading system message, alternating roles',
  rules: [
    ...pairing,
    rules.toolCallsEmpty,
    rules.toolCallMalformed,
    rules.toolCallArgumentsInvalidJson,
    rules.contentNull,
    rules.contentEmpty,
    rules.systemMessagePosition,
    rules.rolesNotAlternating,
    rules.emptyMessages,
  ],
  roles: new Set(['system', 'user', 'assistant', 'tool']),
  strictAlternation: true,
  contentAlwaysRequired: true,
  uniqueIdsAcrossRequest: false,
  thinkingByDefault: () => false,
  errorResponse: (violation) => ({
    status: 400,
    body: { object: 'error', message: violation.message, type: 'BadRequestError', param: null, code: 400 },
  }),
};

export const profiles: Readonly<Record<ProfileName, Profile>> = {
  openai,
  deepseek,
  qwen,
  mistral,
  moonshot,
  groq,
  anthropic,
  local,
};

export const profileNames = Object.keys(profiles) as ProfileName[];

export function isProfileName(name: string): name is ProfileName {
  return Object.hasOwn(profiles, name);
}

export function getProfile(name: ProfileName | Profile | string | undefined): Profile {
  if (name === undefined) return openai;
  if (typeof name !== 'string') return name;
  if (isProfileName(name)) return profiles[name];
  throw new UnstuckError('PROFILE_UNKNOWN', `unknown profile '${name}' (known: ${profileNames.join(', ')})`);
}
