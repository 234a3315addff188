import { UnstuckError } from './errors.js';
import { type FormatName, formatNames } from './formats/format-types.js';
import { callOf, responseOf, roleOf } from './formats/gemini-contents.js';
import { isRecord } from './formats/native-tag.js';
import { callRef, keyOf, outputRef } from './formats/responses-calls.js';

/**
 * What `trim` needs to know of one element of a history, whatever its wire format: whether it is a
 * leading instruction, whether the person speaks in it (a turn may start there), whether the
 * model's side starts a step there, how many calls it opens and results it holds, and how to put
 * a marker in place of its results' contents. Read straight off the native element: no conversion.
 */
export interface TrimShape {
  /** A system or developer instruction that stays when it leads the history. */
  isLead(element: unknown): boolean;
  /** The person's own message (not one that starts with tool results): a turn starts here. */
  isUserText(element: unknown): boolean;
  /** The model's side of the conversation. */
  isAssistant(element: unknown): boolean;
  /** An assistant element that belongs to the step of the element before it (Responses: a function_call after its reasoning). */
  joinsPrevious(element: unknown, previous: unknown): boolean;
  /** Ids of the calls the element opens ('' for a call without one). */
  callIds(element: unknown): string[];
  /** Ids of the results the element holds ('' for a result without one). */
  resultIds(element: unknown): string[];
  /** The element with every result's content replaced by `marker`; the same object when they already are. */
  withMarker(element: unknown, marker: string): unknown;
}

const NONE: string[] = [];

const idOrEmpty = (value: unknown): string => (typeof value === 'string' ? value : '');

const chat: TrimShape = {
  isLead: (element) => isRecord(element) && (element['role'] === 'system' || element['role'] === 'developer'),
  isUserText: (element) => isRecord(element) && element['role'] === 'user',
  isAssistant: (element) => isRecord(element) && element['role'] === 'assistant',
  joinsPrevious: () => false,
  callIds(element) {
    if (!isRecord(element) || element['role'] !== 'assistant' || !Array.isArray(element['tool_calls'])) return NONE;
    return element['tool_calls'].map((call: unknown) => (isRecord(call) ? idOrEmpty(call['id']) : ''));
  },
  resultIds: (element) =>
    isRecord(element) && element['role'] === 'tool' ? [idOrEmpty(element['tool_call_id'])] : NONE,
  withMarker: (element, marker) =>
    isRecord(element) && element['role'] === 'tool' && element['content'] !== marker
      ? { ...element, content: marker }
      : element,
};

const blocksOf = (element: unknown): unknown[] | undefined =>
  isRecord(element) && Array.isArray(element['content']) ? element['content'] : undefined;
const isBlock = (block: unknown, type: string): block is Record<string, unknown> =>
  isRecord(block) && block['type'] === type;

const anthropic: TrimShape = {
  isLead: () => false, // Anthropic carries the system prompt outside `messages`
  isUserText(element) {
    if (!isRecord(element) || element['role'] !== 'user') return false;
    const blocks = blocksOf(element);
    return blocks === undefined || blocks.length === 0 || !isBlock(blocks[0], 'tool_result');
  },
  isAssistant: (element) => isRecord(element) && element['role'] === 'assistant',
  joinsPrevious: () => false,
  callIds(element) {
    if (!isRecord(element) || element['role'] !== 'assistant') return NONE;
    const blocks = blocksOf(element);
    return blocks === undefined
      ? NONE
      : blocks
          .filter((block) => isBlock(block, 'tool_use'))
          .map((block) => idOrEmpty((block as Record<string, unknown>)['id']));
  },
  resultIds(element) {
    if (!isRecord(element) || element['role'] !== 'user') return NONE;
    const blocks = blocksOf(element);
    return blocks === undefined
      ? NONE
      : blocks
          .filter((block) => isBlock(block, 'tool_result'))
          .map((block) => idOrEmpty((block as Record<string, unknown>)['tool_use_id']));
  },
  withMarker(element, marker) {
    const blocks = blocksOf(element);
    if (blocks === undefined || !blocks.some((block) => isBlock(block, 'tool_result') && block['content'] !== marker))
      return element;
    return {
      ...(element as Record<string, unknown>),
      content: blocks.map((block) =>
        isBlock(block, 'tool_result') && block['content'] !== marker ? { ...block, content: marker } : block,
      ),
    };
  },
};

const partsOf = (element: unknown): unknown[] =>
  isRecord(element) && Array.isArray(element['parts']) ? element['parts'] : NONE;

const gemini: TrimShape = {
  isLead: () => false, // Gemini carries the system instruction outside `contents`
  isUserText(element) {
    if (!isRecord(element) || roleOf(element) !== 'user') return false;
    const parts = partsOf(element);
    return parts.length === 0 || responseOf(parts[0]) === undefined;
  },
  isAssistant: (element) => isRecord(element) && element['role'] === 'model',
  joinsPrevious: () => false,
  callIds(element) {
    if (!isRecord(element) || element['role'] !== 'model') return NONE;
    const ids: string[] = [];
    for (const part of partsOf(element)) {
      const found = callOf(part);
      if (found !== undefined) ids.push(idOrEmpty(found.call['id']));
    }
    return ids;
  },
  resultIds(element) {
    if (!isRecord(element) || roleOf(element) !== 'user') return NONE;
    const ids: string[] = [];
    for (const part of partsOf(element)) {
      const found = responseOf(part);
      if (found !== undefined) ids.push(idOrEmpty(found.response['id']));
    }
    return ids;
  },
  withMarker(element, marker) {
    const parts = partsOf(element);
    const marked = (part: unknown): boolean => {
      const found = responseOf(part);
      const response = found?.response['response'];
      return isRecord(response) && Object.keys(response).length === 1 && response['output'] === marker;
    };
    if (!parts.some((part) => responseOf(part) !== undefined && !marked(part))) return element;
    return {
      ...(element as Record<string, unknown>),
      parts: parts.map((part) => {
        const found = responseOf(part);
        if (found === undefined || marked(part)) return part;
        return {
          ...(part as Record<string, unknown>),
          [found.key]: { ...found.response, response: { output: marker } },
        };
      }),
    };
  },
};

const itemType = (item: unknown): string => {
  if (!isRecord(item)) return '';
  if (item['type'] === undefined && typeof item['role'] === 'string') return 'message';
  return typeof item['type'] === 'string' ? item['type'] : '';
};
const itemRole = (item: unknown): unknown => (isRecord(item) ? item['role'] : undefined);

const responses: TrimShape = {
  isLead: (item) => itemType(item) === 'message' && (itemRole(item) === 'system' || itemRole(item) === 'developer'),
  isUserText: (item) => itemType(item) === 'message' && itemRole(item) === 'user',
  isAssistant(item) {
    const type = itemType(item);
    return type === 'message'
      ? itemRole(item) === 'assistant'
      : type !== '' && outputRef(item) === undefined && type !== 'mcp_approval_response';
  },
  // A call belongs with the reasoning item and the text the model gave before it: the API rejects
  // a function_call sent without its reasoning item. Every call kind the client answers
  // (formats/responses-calls.ts) is one.
  joinsPrevious(item, previous) {
    const before = itemType(previous);
    if (before === 'reasoning') return true;
    return (
      callRef(item) !== undefined &&
      (callRef(previous) !== undefined || (before === 'message' && itemRole(previous) === 'assistant'))
    );
  },
  callIds(item) {
    const call = callRef(item);
    return call === undefined ? NONE : [keyOf(call)];
  },
  resultIds(item) {
    const output = outputRef(item);
    return output === undefined ? NONE : [keyOf(output)];
  },
  withMarker(item, marker) {
    const type = itemType(item);
    if (outputRef(item) === undefined || type === 'tool_search_output') return item;
    return (item as Record<string, unknown>)['output'] !== marker
      ? { ...(item as Record<string, unknown>), output: marker }
      : item;
  },
};

export function trimShapeOf(format: FormatName): TrimShape {
  switch (format) {
    case 'openai-chat':
      return chat;
    case 'anthropic-messages':
      return anthropic;
    case 'gemini-contents':
      return gemini;
    case 'responses-input':
      return responses;
    default:
      throw new UnstuckError('USAGE', `unknown wire format '${String(format)}' (known: ${formatNames.join(', ')})`);
  }
}
