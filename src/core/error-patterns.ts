/**
 * Provider error texts -> rule ids: the `match` pattern of every catalogue entry that has one
 * (test/fixtures/shared/rules.json, the catalogue's machine-readable copy; provider/id name the
 * entry and its sources).
 * Order matters: more specific patterns first, so the table is sorted by pattern length, longest first.
 * Left out: openai-chat tool-result-not-adjacent and tool-result-id-mismatch (the provider reports them
 * with the orphan/unanswered texts, per the catalogue notes) and openrouter upstream-wrapped (a wrapper,
 * unwrapped by classifyError before matching).
 */
import type { RuleId } from './rule-ids.js';

export const ERROR_PATTERNS: ReadonlyArray<{ provider: string; rule: RuleId; pattern: RegExp }> = [
  {
    provider: 'anthropic',
    rule: 'tool-calls-unanswered',
    pattern: new RegExp(
      '`?tool_use`? ids were found without `?tool_result`? blocks immediately after|Did not find \\d+ `?tool_result`? block\\(s\\) at the beginning of this message',
    ),
  },
  {
    provider: 'hf-chat-template (vLLM/TGI/llama.cpp/Ollama)',
    rule: 'tool-call-arguments-invalid-json',
    pattern: new RegExp(
      "Expecting .* delimiter|Unterminated string starting at|Invalid \\\\escape|has no attribute 'items'|Failed to parse tool call arguments as JSON",
    ),
  },
  {
    provider: 'mistral',
    rule: 'empty-messages',
    pattern: new RegExp(
      'Conversation must have at least one message|Conversation must start with a user message or system message|System prompt must have content',
    ),
  },
  {
    provider: 'groq',
    rule: 'unknown-message-field',
    pattern: new RegExp(
      "'messages\\.\\d+' : for 'role:\\w+' the following must be satisfied\\[\\('messages\\.\\d+(?:\\.\\w+)?' : property '\\w+' is (?:unsupported|missing)",
    ),
  },
  {
    provider: 'gemini',
    rule: 'content-empty',
    pattern: new RegExp(
      "contents\\.parts must not be empty|required oneof field 'data' must have one initialized field|must have a text parameter",
    ),
  },
  {
    provider: 'deepseek',
    rule: 'reasoning-content-missing',
    pattern: new RegExp(
      'Missing `reasoning_content` field in the assistant message|reasoning_content`? in the thinking mode must be passed back',
    ),
  },
  {
    provider: 'bedrock-converse',
    rule: 'content-empty',
    pattern: new RegExp(
      'The content field in the Message object at messages\\.\\S+ is empty|toolResult cannot be empty when status value is error',
    ),
  },
  {
    provider: 'groq',
    rule: 'tool-call-id-missing',
    pattern: new RegExp(
      "for 'role:tool' the following must be satisfied\\[\\('messages\\.\\d+\\.tool_call_id' : property 'tool_call_id' is missing",
    ),
  },
  {
    provider: 'gemini',
    rule: 'ends-with-assistant',
    pattern: new RegExp(
      'Requests ending with a model turn are not supported|multiturn requests ends with a user role or a function response',
    ),
  },
  {
    provider: 'dashscope',
    rule: 'tool-calls-unanswered',
    pattern: new RegExp(
      'InternalError\\.Algo\\.InvalidParameter: An assistant message with \\"tool_calls\\" must be followed by tool messages',
    ),
  },
  {
    provider: 'bedrock-converse',
    rule: 'text-block-empty',
    pattern: new RegExp(
      'The text field in the ContentBlock object at messages\\.\\S+ is blank|text content blocks must be non-empty',
    ),
  },
  {
    provider: 'openai-chat',
    rule: 'tool-calls-unanswered',
    pattern: new RegExp(
      "assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'",
    ),
  },
  {
    provider: 'anthropic',
    rule: 'thinking-when-disabled',
    pattern: new RegExp(
      'When thinking is disabled, an `?assistant`? message in the final position cannot contain `?thinking`?',
    ),
  },
  {
    provider: 'ollama',
    rule: 'tool-call-arguments-invalid-json',
    pattern: new RegExp(
      'cannot unmarshal string into Go struct field ChatRequest\\.messages\\.tool_calls\\.function\\.arguments',
    ),
  },
  {
    provider: 'openai-chat',
    rule: 'tool-calls-too-many',
    pattern: new RegExp(
      "Invalid 'messages\\[\\d+\\]\\.tool_calls': array too long\\. Expected an array with maximum length 128",
    ),
  },
  {
    provider: 'openai-chat',
    rule: 'name-pattern',
    pattern: new RegExp(
      "Invalid 'messages\\[\\d+\\](?:\\.tool_calls\\[\\d+\\]\\.function)?\\.name': string does not match pattern",
    ),
  },
  {
    provider: 'bedrock-converse',
    rule: 'tool-results-excess',
    pattern: new RegExp(
      'number of toolResult blocks at messages\\.\\d+\\.content exceeds the number of toolUse blocks',
    ),
  },
  {
    provider: 'openai-chat',
    rule: 'content-null',
    pattern: new RegExp("Invalid value for 'content': expected a string, got null|'content' is a required property"),
  },
  {
    provider: 'anthropic',
    rule: 'content-empty',
    pattern: new RegExp('all messages must have non-empty content except for the optional final assistant message'),
  },
  {
    provider: 'gemini',
    rule: 'tool-call-turn-position',
    pattern: new RegExp('function call turn comes immediately after a user turn or after a function response turn'),
  },
  {
    provider: 'openai-chat',
    rule: 'tool-result-orphan',
    pattern: new RegExp("messages with role 'tool' must be a response to a prece+ding message with 'tool_calls'"),
  },
  {
    provider: 'anthropic',
    rule: 'thinking-block-not-first',
    pattern: new RegExp('If an assistant message contains any thinking blocks, the first block must be thinking'),
  },
  {
    provider: 'deepseek',
    rule: 'tool-result-orphan',
    pattern: new RegExp("Messages with role 'tool' must be a response to a preceding message with 'tool_calls'"),
  },
  {
    provider: 'dashscope',
    rule: 'tool-result-orphan',
    pattern: new RegExp('InternalError\\.Algo\\.InvalidParameter: messages with role \\"tool\\" must be a response'),
  },
  {
    provider: 'moonshot',
    rule: 'reasoning-content-missing',
    pattern: new RegExp('thinking is enabled but reasoning_content is missing in assistant tool call message'),
  },
  {
    provider: 'mistral',
    rule: 'tool-result-orphan',
    pattern: new RegExp("Unexpected role 'tool' after role '(?:user|system)'|Unexpected role RoleEnum\\.tool"),
  },
  {
    provider: 'mistral',
    rule: 'name-pattern',
    pattern: new RegExp('Function name was .* but must be a-z, A-Z, 0-9, or contain underscores and dashes'),
  },
  {
    provider: 'gemini',
    rule: 'tool-calls-unanswered',
    pattern: new RegExp('number of function response parts is equal to the number of function call parts'),
  },
  {
    provider: 'gemini',
    rule: 'tool-results-excess',
    pattern: new RegExp('number of function response parts is equal to the number of function call parts'),
  },
  {
    provider: 'mistral',
    rule: 'tool-result-id-mismatch',
    pattern: new RegExp('(?:Unexpected|Duplicate) tool call id \\S+ in (?:tool results|assistant message)'),
  },
  {
    provider: 'bedrock-converse',
    rule: 'tool-result-mixed-content',
    pattern: new RegExp('Conversation blocks and tool result blocks cannot be provided in the same turn'),
  },
  {
    provider: 'anthropic',
    rule: 'tool-result-not-first',
    pattern: new RegExp('`?tool_use`? ids were found without `?tool_result`? blocks immediately after'),
  },
  {
    provider: 'bedrock-invoke-anthropic',
    rule: 'tool-result-not-first',
    pattern: new RegExp('Did not find \\d+ `?tool_result`? block\\(s\\) at the beginning of this message'),
  },
  {
    provider: 'dashscope',
    rule: 'tool-call-arguments-invalid-json',
    pattern: new RegExp('\\"function\\.arguments\\" parameter of the code model must be in JSON format'),
  },
  {
    provider: 'bedrock-converse',
    rule: 'tool-calls-unanswered',
    pattern: new RegExp('Expected toolResult blocks at messages\\.\\d+\\.content for the following Ids'),
  },
  {
    provider: 'anthropic',
    rule: 'system-role-in-messages',
    pattern: new RegExp('Unexpected role \\"system\\"|role \'system\' is not supported on this model'),
  },
  {
    provider: 'moonshot',
    rule: 'content-empty',
    pattern: new RegExp("with role 'assistant' must not be empty|agent message content is empty"),
  },
  {
    provider: 'anthropic',
    rule: 'text-block-empty',
    pattern: new RegExp('text content blocks must (?:be non-empty|contain non-whitespace text)'),
  },
  {
    provider: 'openai-responses',
    rule: 'reasoning-item-orphan',
    pattern: new RegExp("of type 'reasoning' was provided without its required following item"),
  },
  {
    provider: 'hf-chat-template (vLLM/TGI/llama.cpp/Ollama)',
    rule: 'system-role-unsupported',
    pattern: new RegExp('Only user(?:, assistant and tool| and assistant) roles are supported'),
  },
  {
    provider: 'dashscope',
    rule: 'role-unknown',
    pattern: new RegExp("is not one of \\['system', 'assistant', 'user', 'tool', 'function'\\]"),
  },
  {
    provider: 'gemini',
    rule: 'tool-result-orphan',
    pattern: new RegExp('function response turn comes immediately after a function call turn'),
  },
  {
    provider: 'lmstudio',
    rule: 'content-empty',
    pattern: new RegExp("must only contain objects with a 'content' field that is not empty"),
  },
  {
    provider: 'anthropic',
    rule: 'thinking-block-missing',
    pattern: new RegExp('Expected `?thinking`? or `?redacted_thinking`?, but found `?\\w+`?'),
  },
  {
    provider: 'gemini',
    rule: 'role-unknown',
    pattern: new RegExp("Please use a valid role: user, model|Role 'tool' is not supported"),
  },
  {
    provider: 'mistral',
    rule: 'tool-call-id-format',
    pattern: new RegExp('Tool call id was .* but must be a-z, A-Z, 0-9, with a length of 9'),
  },
  {
    provider: 'llama.cpp',
    rule: 'ends-with-assistant',
    pattern: new RegExp('Assistant response prefill is incompatible with enable_thinking'),
  },
  {
    provider: 'anthropic',
    rule: 'thinking-final-block',
    pattern: new RegExp('The final block in an assistant message cannot be `?thinking`?'),
  },
  {
    provider: 'bedrock-converse',
    rule: 'roles-not-alternating',
    pattern: new RegExp('A conversation must alternate between user and assistant roles'),
  },
  {
    provider: 'anthropic',
    rule: 'tool-result-orphan',
    pattern: new RegExp('unexpected `?tool_use_id`? found in `?\\w*tool_result`? blocks'),
  },
  {
    provider: 'deepseek',
    rule: 'ends-with-assistant',
    pattern: new RegExp('The last message of deepseek-reasoner must be a user message'),
  },
  {
    provider: 'deepseek',
    rule: 'tool-calls-unanswered',
    pattern: new RegExp('\\(insufficient tool messages following tool_calls message\\)'),
  },
  {
    provider: 'anthropic',
    rule: 'trailing-whitespace-final-assistant',
    pattern: new RegExp('final assistant content cannot end with trailing whitespace'),
  },
  {
    provider: 'anthropic',
    rule: 'tool-result-id-mismatch',
    pattern: new RegExp('unexpected `?tool_use_id`? found in `?tool_result`? blocks'),
  },
  {
    provider: 'anthropic',
    rule: 'tool-use-wrong-role',
    pattern: new RegExp('`?tool_use`? blocks can only be in `?assistant`? messages'),
  },
  {
    provider: 'openai-responses',
    rule: 'tool-result-orphan',
    pattern: new RegExp('No tool call found for function call output with call_id'),
  },
  {
    provider: 'mistral',
    rule: 'content-empty',
    pattern: new RegExp('Assistant message must have either content or tool_calls'),
  },
  {
    provider: 'anthropic',
    rule: 'roles-not-alternating',
    pattern: new RegExp('roles must alternate between \\"user\\" and \\"assistant\\"'),
  },
  {
    provider: 'gemini',
    rule: 'thinking-signature-invalid',
    pattern: new RegExp('missing a thought_signature|Corrupted thought signature'),
  },
  {
    provider: 'deepseek',
    rule: 'roles-not-alternating',
    pattern: new RegExp('does not support successive user or assistant messages'),
  },
  {
    provider: 'bedrock-converse',
    rule: 'tool-results-split',
    pattern: new RegExp('Expected toolResult blocks at messages\\.\\d+\\.content'),
  },
  {
    provider: 'openrouter',
    rule: 'reasoning-details-missing',
    pattern: new RegExp('require OpenRouter reasoning details to be preserved'),
  },
  {
    provider: 'anthropic',
    rule: 'tool-call-arguments-invalid-json',
    pattern: new RegExp('tool_use\\.input: Input should be a valid dictionary'),
  },
  {
    provider: 'mistral',
    rule: 'tool-calls-unanswered',
    pattern: new RegExp('Not the same number of function calls and responses'),
  },
  {
    provider: 'xai',
    rule: 'content-empty',
    pattern: new RegExp('Each message must have at least one content element'),
  },
  {
    provider: 'openai-responses',
    rule: 'reasoning-item-missing',
    pattern: new RegExp("was provided without its required 'reasoning' item"),
  },
  {
    provider: 'cerebras',
    rule: 'unknown-message-field',
    pattern: new RegExp("property 'messages\\.\\d+\\.\\w+\\.\\w+' is unsupported"),
  },
  {
    provider: 'openai-responses',
    rule: 'tool-call-id-duplicate',
    pattern: new RegExp("Duplicate item found with id|Duplicate 'call_id'"),
  },
  {
    provider: 'zhipu',
    rule: 'no-user-message',
    pattern: new RegExp('messages \u53c2\u6570\u975e\u6cd5|The messages parameter is illegal'),
  },
  {
    provider: 'perplexity',
    rule: 'roles-not-alternating',
    pattern: new RegExp('user and assistant roles should be alternating'),
  },
  {
    provider: 'dashscope',
    rule: 'no-user-message',
    pattern: new RegExp('do not contain elements with the role of user'),
  },
  {
    provider: 'dashscope',
    rule: 'roles-not-alternating',
    pattern: new RegExp('User and assistant need to appear alternately'),
  },
  {
    provider: 'bedrock-converse',
    rule: 'first-message-not-user',
    pattern: new RegExp('A conversation must start with a user message'),
  },
  {
    provider: 'openai-chat',
    rule: 'role-unknown',
    pattern: new RegExp("is not one of \\[.*\\] - 'messages\\.\\d+\\.role'"),
  },
  {
    provider: 'deepseek',
    rule: 'prefix-requires-beta',
    pattern: new RegExp('prefix is only available when using beta api'),
  },
  {
    provider: 'baidu-qianfan-v1',
    rule: 'roles-not-alternating',
    pattern: new RegExp('the length of messages must be an odd number'),
  },
  {
    provider: 'anthropic',
    rule: 'thinking-signature-invalid',
    pattern: new RegExp('Invalid `?signature`? in `?thinking`? block'),
  },
  {
    provider: 'xai',
    rule: 'content-multiple-text-parts',
    pattern: new RegExp('expects a single `text` element per message'),
  },
  {
    provider: 'anthropic',
    rule: 'ends-with-assistant',
    pattern: new RegExp('does not support assistant message prefill'),
  },
  {
    provider: 'minimax',
    rule: 'tool-calls-unanswered',
    pattern: new RegExp('tool call result does not follow tool call'),
  },
  {
    provider: 'openai-chat',
    rule: 'system-role-unsupported',
    pattern: new RegExp("does not support 'system' with this model"),
  },
  {
    provider: 'openai-chat',
    rule: 'json-keyword-required',
    pattern: new RegExp("must contain the word 'json' in some form"),
  },
  {
    provider: 'dashscope',
    rule: 'json-keyword-required',
    pattern: new RegExp("must contain the word 'json' in some form"),
  },
  {
    provider: 'anthropic',
    rule: 'tool-call-id-format',
    pattern: new RegExp('tool_use\\.id: String should match pattern'),
  },
  {
    provider: 'hf-chat-template (vLLM/TGI/llama.cpp/Ollama)',
    rule: 'roles-not-alternating',
    pattern: new RegExp('[Cc]onversation roles must alternate user'),
  },
  { provider: 'deepseek', rule: 'content-empty', pattern: new RegExp('all messages must have non-empty content') },
  {
    provider: 'anthropic',
    rule: 'first-message-not-user',
    pattern: new RegExp('first message must use the \\"user\\" role'),
  },
  {
    provider: 'bedrock-invoke-anthropic',
    rule: 'first-message-not-user',
    pattern: new RegExp('first message must use the \\"user\\" role'),
  },
  {
    provider: 'mistral',
    rule: 'tool-followed-by-user',
    pattern: new RegExp("Unexpected role 'user' after role 'tool'"),
  },
  {
    provider: 'hf-chat-template (vLLM/TGI/llama.cpp/Ollama)',
    rule: 'system-message-position',
    pattern: new RegExp('System message must be at the beginning'),
  },
  {
    provider: 'openai-responses',
    rule: 'tool-calls-unanswered',
    pattern: new RegExp('No tool output found for function call'),
  },
  // Not a catalogue entry's match: the API's text for a custom_tool_call without its output
  // (seen through a router in front of Codex, diegosouzapw/OmniRoute#8946).
  {
    provider: 'openai-responses',
    rule: 'tool-calls-unanswered',
    pattern: new RegExp('No tool output found for custom tool call'),
  },
  { provider: 'dashscope', rule: 'content-null', pattern: new RegExp('The content field is a required field') },
  { provider: 'openai-chat', rule: 'tool-result-duplicate', pattern: new RegExp("Duplicate value for 'tool_call_id'") },
  { provider: 'deepseek', rule: 'tool-call-id-duplicate', pattern: new RegExp("Duplicate value for 'tool_call_id'") },
  {
    provider: 'hf-chat-template (vLLM/TGI/llama.cpp/Ollama)',
    rule: 'no-user-message',
    pattern: new RegExp('[Nn]o user query found in messages'),
  },
  { provider: 'groq', rule: 'content-null', pattern: new RegExp("content' : value must be a string") },
  { provider: 'openai-chat', rule: 'tool-call-id-missing', pattern: new RegExp("Missing parameter 'tool_call_id'") },
  { provider: 'mistral', rule: 'prefix-not-last', pattern: new RegExp('prefix True must be last message') },
  { provider: 'openai-chat', rule: 'empty-messages', pattern: new RegExp("Invalid 'messages': empty array") },
  { provider: 'anthropic', rule: 'tool-call-id-duplicate', pattern: new RegExp('`?tool_use`? ids must be unique') },
  { provider: 'mistral', rule: 'ends-with-assistant', pattern: new RegExp('Expected last role User or Tool') },
  {
    provider: 'openai-responses',
    rule: 'system-role-unsupported',
    pattern: new RegExp('System messages are not allowed'),
  },
  { provider: 'mistral', rule: 'tool-call-id-missing', pattern: new RegExp('Tool call id has to be defined') },
  { provider: 'moonshot', rule: 'tool-call-id-duplicate', pattern: new RegExp('tool call id \\S+ is duplicated') },
  { provider: 'deepseek', rule: 'role-unknown', pattern: new RegExp('unknown variant `developer`') },
  { provider: 'gemini', rule: 'text-block-empty', pattern: new RegExp('has an empty text parameter') },
  { provider: 'xai', rule: 'tool-call-arguments-invalid-json', pattern: new RegExp('are not a valid JSON string') },
  { provider: 'gemini', rule: 'empty-messages', pattern: new RegExp('contents is not specified') },
  {
    provider: 'tencent-hunyuan',
    rule: 'content-empty',
    pattern: new RegExp('messages \u4e2d content \u4e0d\u80fd\u4e3a\u7a7a'),
  },
  { provider: 'anthropic', rule: 'empty-messages', pattern: new RegExp('at least one element') },
  // Wordings this package adds for rules the catalogue has no text for (the emulator answers with them).
  {
    provider: 'unstuck',
    rule: 'tool-call-id-missing',
    pattern: new RegExp("Missing required parameter: 'messages\\[\\d+\\]\\.tool_calls\\[\\d+\\]\\.id'"),
  },
  {
    provider: 'unstuck',
    rule: 'tool-call-malformed',
    pattern: new RegExp(
      "Missing required parameter: 'messages\\[\\d+\\]\\.tool_calls\\[\\d+\\]\\.function'|tool_calls\\[\\d+\\]: missing field `function`",
    ),
  },
  {
    provider: 'unstuck',
    rule: 'tool-calls-empty',
    pattern: new RegExp("Invalid 'messages\\[\\d+\\]\\.tool_calls': empty array"),
  },
  {
    provider: 'unstuck',
    rule: 'message-malformed',
    pattern: new RegExp("Invalid type for 'messages\\[\\d+\\]'|messages\\[\\d+\\]: missing field `role`"),
  },
  {
    provider: 'unstuck',
    rule: 'message-malformed',
    pattern: new RegExp(
      "Invalid (?:type|value) for 'messages\\[\\d+\\]\\.content|messages\\[\\d+\\]\\.content\\S*: invalid .*, expected a string or an array of content parts",
    ),
  },
  { provider: 'unstuck', rule: 'tool-call-id-duplicate', pattern: new RegExp("Duplicate value for 'tool_calls\\.id'") },
];
