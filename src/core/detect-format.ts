import type { FormatName } from './formats/format-types.js';

/**
 * Recognise or refuse (docs/decisions/recognise-or-refuse.md): a history is read as a wire format
 * only on positive evidence of it, never because nothing else matched. Each wire has a recogniser:
 * every element must have the form of that wire's elements (what makes it one at all), and at
 * least one must carry the format's required fields with their types (the evidence, named in the
 * answer). The recognisers exclude each other by construction; were two to match, the document is
 * refused as ambiguous, never guessed.
 */
export interface Recognised {
  format: FormatName;
  /** What showed it, e.g. `messages[0] has role "user" and a content (openai-chat)`. */
  evidence: string;
  /** For a request body: the key holding the history. */
  key?: string;
}

export interface Refused {
  format?: undefined;
  /** Why no format was recognised, one line (the elements or fields that did not fit). */
  why: string;
}

/** One wire's recogniser: `items` the history, `body` the request body it came in (if one), `path` how to name an element. */
export interface WireRecogniser {
  format: FormatName;
  /** The request-body key that holds this wire's history. */
  key: 'messages' | 'contents' | 'input';
  recognise(items: readonly unknown[], body: Record<string, unknown> | undefined, path: string): Match | Miss;
}

type Match = { evidence: string };
/** `index`: the first element that does not fit (WHOLE: every element fits, the document lacks evidence), so a refusal names the nearest miss. */
type Miss = { why: string; index: number };

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

const WHOLE = Number.POSITIVE_INFINITY;
const miss = (index: number, why: string): Miss => ({ index, why });
const isMiss = (result: Match | Miss): result is Miss => 'why' in result;

const RESPONSES_ITEM_TYPES = new Set([
  'message',
  'function_call',
  'function_call_output',
  'reasoning',
  'item_reference',
  'custom_tool_call',
  'custom_tool_call_output',
  'computer_call',
  'computer_call_output',
  'web_search_call',
  'file_search_call',
  'local_shell_call',
  'local_shell_call_output',
  'mcp_call',
  'mcp_list_tools',
  'mcp_approval_request',
  'mcp_approval_response',
  'image_generation_call',
  'code_interpreter_call',
  // Client-executed tool search (responses-calls.ts pairs it with its output) and Codex's opaque compaction item.
  'tool_search_call',
  'tool_search_output',
  'compaction',
]);
/** Content blocks only Anthropic Messages has (a chat gateway passes them on, but a history of them is Anthropic's). */
const ANTHROPIC_BLOCK_TYPES = new Set(['tool_use', 'tool_result', 'thinking', 'redacted_thinking']);
const CHAT_ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool', 'function']);
const CHAT_ONLY_FIELDS = ['tool_calls', 'tool_call_id', 'function_call'] as const;
const GEMINI_ROLES = new Set(['user', 'model', 'function']);
/** What a Gemini part carries (REST camelCase or proto snake_case names), each with its type. */
const GEMINI_PART_DATA: readonly [string, 'string' | 'object' | 'boolean'][] = [
  ['text', 'string'],
  ['inlineData', 'object'],
  ['inline_data', 'object'],
  ['fileData', 'object'],
  ['file_data', 'object'],
  ['functionCall', 'object'],
  ['function_call', 'object'],
  ['functionResponse', 'object'],
  ['function_response', 'object'],
  ['executableCode', 'object'],
  ['executable_code', 'object'],
  ['codeExecutionResult', 'object'],
  ['code_execution_result', 'object'],
  ['thought', 'boolean'],
];

const isContent = (value: unknown): boolean => typeof value === 'string' || Array.isArray(value);
const at = (path: string, index: number): string => `${path}[${index}]`;
const shown = (value: unknown): string => (typeof value === 'string' ? JSON.stringify(value) : kind(value));
/** What a value is, in words: `a string`, `an array`, `null`. */
const kind = (value: unknown): string =>
  value === null
    ? 'null'
    : Array.isArray(value)
      ? 'an array'
      : typeof value === 'object'
        ? 'an object'
        : `a ${typeof value}`;

/** The first Anthropic-only block of the history: where it is and its type. */
function anthropicBlock(items: readonly unknown[], path: string): string | undefined {
  for (let index = 0; index < items.length; index += 1) {
    const content = isRecord(items[index]) ? (items[index] as Record<string, unknown>)['content'] : undefined;
    if (!Array.isArray(content)) continue;
    for (let block = 0; block < content.length; block += 1) {
      const value = content[block];
      if (isRecord(value) && typeof value['type'] === 'string' && ANTHROPIC_BLOCK_TYPES.has(value['type']))
        return `${at(path, index)}.content[${block}] is a ${value['type']} block`;
    }
  }
  return undefined;
}

/**
 * How one element stands to a wire: it has that wire's form (`fits`); or it is a damaged one (`junk`:
 * not an object, or an object with some of the wire's fields but not their form), which does not decide
 * and which the wire's check names; or it is not the wire's at all (a string saying why: another wire's
 * marks, or none of this wire's fields), and then neither is the document.
 */
type Standing = 'fits' | 'junk' | string;

/** An object with none of `fields` is no element of the wire, not a damaged one. */
function foreign(value: Record<string, unknown>, where: string, fields: readonly string[]): string | undefined {
  return fields.some((field) => field in value)
    ? undefined
    : `${where} has none of the fields (${fields.join(', ')}) of such an element`;
}

/** The form OpenAI chat and Anthropic messages share: an object with a string role, without Gemini's parts or a Responses type. */
function roleElement(value: unknown, where: string): Standing {
  if (!isRecord(value)) return 'junk';
  if ('parts' in value) return `${where} has "parts", which no chat or Anthropic message has`;
  if ('type' in value) return `${where} has a "type" (${shown(value['type'])}), which no chat or Anthropic message has`;
  if (typeof value['role'] === 'string') return 'fits';
  return foreign(value, where, ['role', 'content', 'tool_calls', 'tool_call_id']) ?? 'junk';
}

/** The whole history's standing: the first element of another wire, else the first with the evidence. */
function judge(
  items: readonly unknown[],
  path: string,
  standing: (value: unknown, where: string) => Standing,
  evidence: (value: Record<string, unknown>, where: string) => string | undefined,
  none: string,
): Match | Miss {
  if (items.length === 0) return miss(WHOLE, 'the history is empty: no element to recognise a format by');
  let found: string | undefined;
  for (let index = 0; index < items.length; index += 1) {
    const where = at(path, index);
    const result = standing(items[index], where);
    if (result === 'junk') continue;
    if (result !== 'fits') return miss(index, result);
    if (found === undefined) found = evidence(items[index] as Record<string, unknown>, where);
  }
  return found === undefined ? miss(WHOLE, none) : { evidence: found };
}

const anthropicRecogniser: WireRecogniser = {
  format: 'anthropic-messages',
  key: 'messages',
  recognise(items, body, path) {
    const result = judge(
      items,
      path,
      (value, where) => {
        const standing = roleElement(value, where);
        if (standing !== 'fits') return standing;
        const message = value as Record<string, unknown>;
        if (message['role'] !== 'user' && message['role'] !== 'assistant')
          return `${where} has role ${shown(message['role'])}: Anthropic messages are user or assistant`;
        const chatField = CHAT_ONLY_FIELDS.find((field) => field in message);
        if (chatField !== undefined) return `${where} has "${chatField}", which is OpenAI chat's`;
        // Anthropic's check does not name a content of another type: refused here rather than called valid.
        return isContent(message['content'])
          ? 'fits'
          : `${where} has a content that is ${kind(message['content'])}: an Anthropic message's is a string or an array of blocks`;
      },
      (value, where) => (isContent(value['content']) ? where : undefined),
      'no message has role and content',
    );
    if (isMiss(result)) return result;
    const block = anthropicBlock(items, path);
    if (block !== undefined)
      return { evidence: `${block}, and every message is user or assistant (anthropic-messages)` };
    if (body !== undefined && 'system' in body)
      return {
        evidence: `the body has a top-level "system" and ${result.evidence} has role and content (anthropic-messages)`,
      };
    return miss(WHOLE, 'no Anthropic-only block (tool_use, tool_result, thinking) and no top-level "system"');
  },
};

const chatRecogniser: WireRecogniser = {
  format: 'openai-chat',
  key: 'messages',
  recognise(items, body, path) {
    if (body !== undefined && 'system' in body)
      return miss(
        WHOLE,
        'the body has a top-level "system", which an OpenAI chat request has not (Anthropic Messages has)',
      );
    const result = judge(
      items,
      path,
      roleElement,
      (value, where) => {
        if (!CHAT_ROLES.has(value['role'] as string)) return undefined;
        if (isContent(value['content']) || value['content'] === null)
          return `${where} has role ${shown(value['role'])} and a content (openai-chat)`;
        if (Array.isArray(value['tool_calls']))
          return `${where} has role ${shown(value['role'])} and tool_calls (openai-chat)`;
        return undefined;
      },
      'no message has a known role with a content or tool_calls',
    );
    if (isMiss(result)) return result;
    // The one overlap, decided by a documented order: user/assistant messages with Anthropic-only blocks are Anthropic's.
    if (!isMiss(anthropicRecogniser.recognise(items, body, path)))
      return miss(WHOLE, 'it is Anthropic Messages (Anthropic-only blocks, user and assistant messages only)');
    return result;
  },
};

const hasGeminiData = (part: unknown): boolean =>
  isRecord(part) &&
  GEMINI_PART_DATA.some(([field, type]) => (type === 'object' ? isRecord(part[field]) : typeof part[field] === type));

const geminiRecogniser: WireRecogniser = {
  format: 'gemini-contents',
  key: 'contents',
  recognise(items, body, path) {
    return judge(
      items,
      path,
      (value, where) => {
        if (!isRecord(value)) return 'junk';
        if ('content' in value) return `${where} has a "content", which no Gemini content has`;
        if ('type' in value) return `${where} has a "type" (${shown(value['type'])}), which no Gemini content has`;
        if (!Array.isArray(value['parts'])) return foreign(value, where, ['role', 'parts']) ?? 'junk';
        const parts = value['parts'] as unknown[];
        const typed = parts.findIndex((part) => isRecord(part) && 'type' in part);
        if (typed !== -1)
          return `${where}.parts[${typed}] has a "type" (${shown((parts[typed] as Record<string, unknown>)['type'])}): Gemini parts carry text, functionCall, functionResponse, inlineData, fileData or thought, never a type`;
        return 'fits';
      },
      (value, where) => {
        // An absent role is the user's (the API's default), in a request body; a bare array names its roles.
        const role = value['role'];
        const known = role === undefined ? body !== undefined : GEMINI_ROLES.has(role as string);
        const parts = value['parts'] as unknown[];
        if (!known || parts.length === 0 || !parts.every(hasGeminiData)) return undefined;
        return `${where} has ${role === undefined ? 'no role (the user)' : `role ${shown(role)}`} and parts with Gemini data (gemini-contents)`;
      },
      'no content has a Gemini role (user, model, function) with parts that carry Gemini data',
    );
  },
};

const REQUIRED_ITEM_FIELDS: Record<string, string> = {
  function_call: 'string call_id, name and arguments',
  function_call_output: 'string call_id, output',
  custom_tool_call: 'string call_id, name and input',
  custom_tool_call_output: 'string call_id, output',
  reasoning: 'summary array',
  item_reference: 'string id',
};

/** The required fields of the Responses items that have them, with their types. */
function responsesItemEvidence(value: Record<string, unknown>): string | undefined {
  const strings = (...fields: string[]) => fields.every((field) => typeof value[field] === 'string');
  switch (value['type']) {
    case 'message':
      return typeof value['role'] === 'string' && isContent(value['content'])
        ? 'a message with role and content'
        : undefined;
    case 'function_call':
      return strings('call_id', 'name', 'arguments') ? 'a function_call with call_id, name and arguments' : undefined;
    case 'function_call_output':
      return strings('call_id') && isContent(value['output'])
        ? 'a function_call_output with call_id and output'
        : undefined;
    case 'custom_tool_call':
      return strings('call_id', 'name', 'input') ? 'a custom_tool_call with call_id, name and input' : undefined;
    case 'custom_tool_call_output':
      return strings('call_id') && isContent(value['output'])
        ? 'a custom_tool_call_output with call_id and output'
        : undefined;
    case 'reasoning':
      return Array.isArray(value['summary']) ? 'a reasoning item with a summary' : undefined;
    case 'item_reference':
      return strings('id') ? 'an item_reference with an id' : undefined;
    default:
      return `a ${value['type'] as string} item`;
  }
}

const responsesRecogniser: WireRecogniser = {
  format: 'responses-input',
  key: 'input',
  recognise(items, _body, path) {
    const result = judge(
      items,
      path,
      (value, where) => {
        if (!isRecord(value)) return 'junk';
        if ('parts' in value) return `${where} has "parts", which no Responses input item has`;
        if (typeof value['type'] === 'string' && !RESPONSES_ITEM_TYPES.has(value['type']))
          return `${where} has type ${shown(value['type'])}, which is no Responses input item's`;
        const message = value['type'] === 'message' || (!('type' in value) && typeof value['role'] === 'string');
        // The Responses check does not name a message without a content of its type: refused here rather than called valid.
        if (message && typeof value['role'] !== 'string')
          return `${where} is a message with no string role: a Responses message has one`;
        if (message && !isContent(value['content']))
          return `${where} is a message whose content is ${kind(value['content'])}: a Responses message's is a string or an array of parts`;
        if (message) return 'fits';
        if (typeof value['type'] === 'string')
          // Nor does it name every item without its required fields (a function_call with no name): refused here.
          return responsesItemEvidence(value) === undefined
            ? `${where} is a ${value['type']} item without its required fields (${REQUIRED_ITEM_FIELDS[value['type']] ?? ''})`
            : 'fits';
        // An item with neither a type nor a role the Responses check cannot place (nor name): refused, not skipped.
        return (
          foreign(value, where, ['type', 'role', 'content', 'call_id', 'output']) ??
          `${where} has neither a type nor a role: every Responses input item has one`
        );
      },
      (value, where) => {
        if (typeof value['type'] !== 'string') return undefined;
        const found = responsesItemEvidence(value);
        return found === undefined ? undefined : `${where} is ${found} (responses-input)`;
      },
      'no item has a Responses item type with its fields',
    );
    if (isMiss(result)) return result;
    const block = anthropicBlock(items, path);
    return block === undefined ? result : miss(WHOLE, `${block}, which is Anthropic's`);
  },
};

/**
 * The wire recognisers, in the order a refusal lists their reasons. They exclude each other (the
 * one overlap, Anthropic's blocks in user/assistant messages a chat gateway would also take, is
 * decided for Anthropic inside the chat recogniser); a document two of them take is refused.
 */
export const WIRE_RECOGNISERS: readonly WireRecogniser[] = [
  chatRecogniser,
  anthropicRecogniser,
  geminiRecogniser,
  responsesRecogniser,
];

const HISTORY_KEYS = ['messages', 'contents', 'input'] as const;

/**
 * Recognises the wire format of a history (an array) or of a request body (an object holding one
 * under `messages`, `contents` or `input`), or refuses it with the reasons, one line. Nothing it
 * does not recognise is called one of the formats: an empty history, elements of no wire, a body
 * with two history keys are all refused.
 */
export function recogniseFormat(value: unknown): Recognised | Refused {
  if (Array.isArray(value)) return recogniseItems(value, undefined, '', WIRE_RECOGNISERS);
  if (!isRecord(value))
    return {
      why: `${kind(value)}, not a history (an array) or a request body (an object)`,
    };
  const keys = HISTORY_KEYS.filter((key) => Array.isArray(value[key]));
  if (keys.length === 0) return { why: 'an object with no "messages", "contents" or "input" array' };
  if (keys.length > 1)
    return {
      why: `a body with both ${keys.map((key) => `"${key}"`).join(' and ')}: which history is meant cannot be told`,
    };
  const key = keys[0] as (typeof HISTORY_KEYS)[number];
  const recognised = recogniseItems(
    value[key] as unknown[],
    value,
    key,
    WIRE_RECOGNISERS.filter((recogniser) => recogniser.key === key),
  );
  return recognised.format === undefined ? recognised : { ...recognised, key };
}

function recogniseItems(
  items: readonly unknown[],
  body: Record<string, unknown> | undefined,
  path: string,
  recognisers: readonly WireRecogniser[],
): Recognised | Refused {
  const matches: Recognised[] = [];
  const misses: { format: FormatName; miss: Miss }[] = [];
  for (const recogniser of recognisers) {
    const result = recogniser.recognise(items, body, path);
    if (isMiss(result)) misses.push({ format: recogniser.format, miss: result });
    else matches.push({ format: recogniser.format, evidence: result.evidence });
  }
  if (matches.length === 1) return matches[0] as Recognised;
  if (matches.length > 1)
    return {
      why: `ambiguous: it reads as ${matches.map((match) => `${match.format} (${match.evidence})`).join(' and as ')}`,
    };
  // The nearest miss first: the format that read the most elements before one did not fit.
  const nearest = Math.max(...misses.map(({ miss }) => miss.index));
  const reasons = new Map<string, FormatName[]>();
  for (const { format, miss } of misses)
    if (miss.index === nearest) reasons.set(miss.why, [...(reasons.get(miss.why) ?? []), format]);
  return {
    why: [...reasons].map(([why, formats]) => `not ${formats.join(' nor ')}: ${why}`).join('; '),
  };
}

/**
 * The wire format of a history (an array) or of a request body (an object holding one), or
 * undefined when it is not recognised (recogniseFormat says why, and what showed the format).
 */
export function detectFormat(value: unknown): FormatName | undefined {
  return recogniseFormat(value).format;
}
