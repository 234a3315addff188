import type { CheckOptions } from '../options.js';
import type { Violation } from '../violation.js';
import { callOf, responseOf, roleOf } from './gemini-contents.js';
import { GEMINI_FINAL_TURN_TEXT, geminiFinalTurn } from './gemini-model.js';
import { isRecord } from './native-tag.js';

/**
 * The Gemini `contents` rules, worded as the API words them (the rule catalogue,
 * test/fixtures/shared/rules.json, provider gemini; the texts match the catalogue's `match`
 * patterns). Gemini pairs by turn and count: a function response turn right after the call turn,
 * with as many functionResponse parts as it has functionCall parts.
 */
export const GEMINI_TEXT = {
  callPosition:
    'Please ensure that function call turn comes immediately after a user turn or after a function response turn.',
  responsePosition: 'Please ensure that function response turn comes immediately after a function call turn.',
  count:
    'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.',
  emptyText:
    'Unable to submit request because it has an empty text parameter. Add a value to the parameter and try again. Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/gemini',
  role: 'Please use a valid role: user, model.',
} as const;

/** Part fields that are not data: a part made only of these carries nothing. */
const METADATA = new Set([
  'thought',
  'thoughtSignature',
  'thought_signature',
  'videoMetadata',
  'video_metadata',
  'partMetadata',
  'part_metadata',
  'mediaResolution',
  'media_resolution',
]);

export function isDatalessPart(part: unknown): boolean {
  return !isRecord(part) || Object.keys(part).every((key) => METADATA.has(key));
}

/** An empty text part, unless it carries a thought signature (Gemini 3 returns those and takes them back). */
export function isEmptyTextPart(part: unknown): boolean {
  return (
    isRecord(part) &&
    part['text'] === '' &&
    part['thoughtSignature'] === undefined &&
    part['thought_signature'] === undefined &&
    Object.keys(part).every((key) => key === 'text' || METADATA.has(key))
  );
}

export function countCalls(content: unknown): number {
  return isRecord(content) && Array.isArray(content['parts'])
    ? content['parts'].filter((part) => callOf(part) !== undefined).length
    : 0;
}

export function countResponses(content: unknown): number {
  return isRecord(content) && Array.isArray(content['parts'])
    ? content['parts'].filter((part) => responseOf(part) !== undefined).length
    : 0;
}

export function checkGeminiContents(input: readonly unknown[], options: CheckOptions = {}): Violation[] {
  const violations: Violation[] = [];
  const report = (violation: Violation) => violations.push(violation);
  if (input.length === 0)
    report({
      rule: 'empty-messages',
      index: 0,
      message: '* GenerateContentRequest.contents: contents is not specified',
    });
  for (let index = 0; index < input.length; index += 1) {
    const content = input[index];
    if (!isRecord(content)) {
      report({
        rule: 'message-malformed',
        index,
        message: `* GenerateContentRequest.contents[${index}]: a content must be an object with role and parts`,
      });
      continue;
    }
    const role = roleOf(content);
    if (role !== 'user' && role !== 'model') report({ rule: 'role-unknown', index, message: GEMINI_TEXT.role });
    const parts = content['parts'];
    if (!Array.isArray(parts) || parts.length === 0) {
      report({
        rule: 'content-empty',
        index,
        message: `* GenerateContentRequest.contents[${index}].parts: contents.parts must not be empty.`,
      });
      continue;
    }
    parts.forEach((part, position) => {
      if (isDatalessPart(part))
        report({
          rule: 'content-empty',
          index,
          message: `* GenerateContentRequest.contents[${index}].parts[${position}].data: required oneof field 'data' must have one initialized field`,
        });
      else if (isEmptyTextPart(part)) report({ rule: 'text-block-empty', index, message: GEMINI_TEXT.emptyText });
    });
    const previous = input[index - 1];
    const calls = role === 'model' ? countCalls(content) : 0;
    if (calls > 0 && (index === 0 || !isRecord(previous) || roleOf(previous) === 'model'))
      report({ rule: 'tool-call-turn-position', index, message: GEMINI_TEXT.callPosition });
    if (calls > 0 && countResponses(input[index + 1]) === 0)
      report({ rule: 'tool-calls-unanswered', index, message: GEMINI_TEXT.count });
    const responses = countResponses(content);
    if (responses === 0) continue;
    const owed = isRecord(previous) && roleOf(previous) === 'model' ? countCalls(previous) : 0;
    if (owed === 0) report({ rule: 'tool-result-orphan', index, message: GEMINI_TEXT.responsePosition });
    else if (responses < owed) report({ rule: 'tool-calls-unanswered', index: index - 1, message: GEMINI_TEXT.count });
    else if (responses > owed) report({ rule: 'tool-results-excess', index, message: GEMINI_TEXT.count });
  }
  const final = finalModelTurn(input);
  const verdict = geminiFinalTurn(options.model);
  if (final >= 0 && verdict !== undefined && verdict !== 'prefill')
    // CATALOGUE gemini/ends-with-assistant; which models: gemini-model.ts.
    report({ rule: 'ends-with-assistant', index: final, message: GEMINI_FINAL_TURN_TEXT[verdict] });
  return violations.sort((a, b) => a.index - b.index);
}

/** The index of a final model turn that is a prefill (no functionCall: a call turn at the end is an unanswered call), or -1. */
export function finalModelTurn(input: readonly unknown[]): number {
  const index = input.length - 1;
  const last = input[index];
  return isRecord(last) && roleOf(last) === 'model' && countCalls(last) === 0 ? index : -1;
}
