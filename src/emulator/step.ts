import { UnstuckError } from '../core/index.js';

/** A fault the emulator plays instead of (or, for a stall, before) a normal answer. */
export type Fault =
  | { status: 429; retryAfter?: number }
  | { status: 500 | 502 | 503 | 529 }
  | { stall: number }
  | { disconnectAfterChunks: number }
  | { overloadedAfterChunks: number };

/** One scripted answer. Each valid request takes the next step; an empty script answers "ok". */
export interface Step {
  text?: string;
  reasoning?: string;
  toolCalls?: { id?: string; name: string; arguments: string }[];
  /** Used when the request has `stream: true`. */
  stream?: { chunkSize?: number; delayMs?: number };
  /**
   * `stall`: nothing is sent for that many ms, then the step is answered as usual (a client with
   * a shorter timeout gives up and its retry takes the next step). `disconnectAfterChunks`: the
   * connection drops after that many SSE events (non-streaming: before any body byte).
   * `overloadedAfterChunks`: after that many events the stream carries the provider's own
   * mid-stream error (Anthropic: `event: error` with `overloaded_error`) and ends cleanly;
   * non-streaming, the overloaded status (Anthropic 529, chat 503).
   */
  fault?: Fault;
}

const STEP_KEYS = new Set(['text', 'reasoning', 'toolCalls', 'stream', 'fault']);

/**
 * Reads a script: a JSON array of steps, or `{ "steps": [...] }`. Throws `INPUT_INVALID` naming
 * the step and the field, so `unstuck emulate --script` can print one clear line.
 */
export function parseScript(value: unknown, file?: string): Step[] {
  const steps = Array.isArray(value)
    ? value
    : isObject(value) && Array.isArray(value['steps'])
      ? value['steps']
      : undefined;
  if (steps === undefined) throw invalid('a script is a JSON array of steps (or {"steps": [...]})', file);
  return steps.map((step, index) => parseStep(step, index, file));
}

function parseStep(value: unknown, index: number, file: string | undefined): Step {
  const where = `step ${index}`;
  if (!isObject(value)) throw invalid(`${where}: a step is an object`, file);
  for (const key of Object.keys(value)) {
    if (!STEP_KEYS.has(key))
      throw invalid(`${where}: unknown field '${key}' (known: ${[...STEP_KEYS].join(', ')})`, file);
  }
  const step: Step = {};
  if (value['text'] !== undefined) step.text = stringField(value['text'], `${where}.text`, file);
  if (value['reasoning'] !== undefined) step.reasoning = stringField(value['reasoning'], `${where}.reasoning`, file);
  if (value['toolCalls'] !== undefined) {
    const calls = value['toolCalls'];
    if (!Array.isArray(calls)) throw invalid(`${where}.toolCalls: expected an array`, file);
    step.toolCalls = calls.map((call, callIndex) => {
      const at = `${where}.toolCalls[${callIndex}]`;
      if (!isObject(call)) throw invalid(`${at}: expected an object`, file);
      const parsed: { id?: string; name: string; arguments: string } = {
        name: stringField(call['name'], `${at}.name`, file),
        arguments: call['arguments'] === undefined ? '{}' : stringField(call['arguments'], `${at}.arguments`, file),
      };
      if (call['id'] !== undefined) parsed.id = stringField(call['id'], `${at}.id`, file);
      return parsed;
    });
  }
  if (value['stream'] !== undefined) {
    const stream = value['stream'];
    if (!isObject(stream)) throw invalid(`${where}.stream: expected an object`, file);
    const options: { chunkSize?: number; delayMs?: number } = {};
    if (stream['chunkSize'] !== undefined)
      options.chunkSize = numberField(stream['chunkSize'], `${where}.stream.chunkSize`, file, 1);
    if (stream['delayMs'] !== undefined)
      options.delayMs = numberField(stream['delayMs'], `${where}.stream.delayMs`, file, 0);
    step.stream = options;
  }
  if (value['fault'] !== undefined) step.fault = parseFault(value['fault'], `${where}.fault`, file);
  return step;
}

function parseFault(value: unknown, where: string, file: string | undefined): Fault {
  if (!isObject(value)) throw invalid(`${where}: expected an object`, file);
  if (value['status'] === 429) {
    return value['retryAfter'] === undefined
      ? { status: 429 }
      : { status: 429, retryAfter: numberField(value['retryAfter'], `${where}.retryAfter`, file, 0) };
  }
  if (value['status'] === 500 || value['status'] === 502 || value['status'] === 503 || value['status'] === 529)
    return { status: value['status'] };
  if (value['stall'] !== undefined) return { stall: numberField(value['stall'], `${where}.stall`, file, 0) };
  if (value['disconnectAfterChunks'] !== undefined) {
    return {
      disconnectAfterChunks: numberField(value['disconnectAfterChunks'], `${where}.disconnectAfterChunks`, file, 0),
    };
  }
  if (value['overloadedAfterChunks'] !== undefined) {
    return {
      overloadedAfterChunks: numberField(value['overloadedAfterChunks'], `${where}.overloadedAfterChunks`, file, 0),
    };
  }
  throw invalid(
    `${where}: expected {status: 429|500|502|503|529}, {stall: ms}, {disconnectAfterChunks: n} or {overloadedAfterChunks: n}`,
    file,
  );
}

function stringField(value: unknown, where: string, file: string | undefined): string {
  if (typeof value !== 'string') throw invalid(`${where}: expected a string`, file);
  return value;
}

function numberField(value: unknown, where: string, file: string | undefined, minimum: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < minimum)
    throw invalid(`${where}: expected a number >= ${minimum}`, file);
  return value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function invalid(message: string, file: string | undefined): UnstuckError {
  return new UnstuckError('INPUT_INVALID', message, file === undefined ? {} : { file });
}
