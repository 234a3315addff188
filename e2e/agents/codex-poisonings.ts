import { joinLines, jsonlLines } from './agent-process.js';
import type { SessionPoisoning } from './resume-poisoned.js';

/**
 * Poisonings of a Codex rollout file (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`, one
 * `{timestamp, type, payload}` record a line; the history is the `response_item` records, each
 * payload a Responses item). Each is the shape of a reported failure; every other line is kept
 * byte for byte.
 */

const isItem = (record: Record<string, any> | undefined, type: string): boolean =>
  record?.['type'] === 'response_item' && record['payload']?.type === type;
const inputOf = (body: any): any[] => (Array.isArray(body?.input) ? body.input : []);
const calls = (body: any) => inputOf(body).filter((item) => item?.type === 'function_call');
const outputs = (body: any) => inputOf(body).filter((item) => item?.type === 'function_call_output');

function edit(
  text: string,
  change: (lines: string[], records: (Record<string, any> | undefined)[]) => number[],
): { text: string; lines: number[] } {
  const { lines, records } = jsonlLines(text);
  const changed = change(lines, records);
  return { text: joinLines(lines), lines: changed };
}

const find = (records: (Record<string, any> | undefined)[], type: string): number => {
  const index = records.findIndex((record) => isItem(record, type));
  if (index < 0) throw new Error(`codex-poisonings: the rollout has no ${type} item`);
  return index;
};

export const codexPoisonings: readonly SessionPoisoning[] = [
  {
    name: 'function-call-recorded-twice',
    rule: 'tool-call-id-duplicate',
    what: 'the function_call response_item written twice, one after the other (a rollout appended to twice; "Duplicate item found with id fc_…")',
    sent: (body) => new Set(calls(body).map((item) => item.call_id)).size < calls(body).length,
    apply: (text) =>
      edit(text, (lines, records) => {
        const index = find(records, 'function_call');
        lines.splice(index + 1, 0, lines[index] ?? '');
        return [index + 2];
      }),
  },
  {
    name: 'output-missing',
    rule: 'tool-calls-unanswered',
    what: 'the function_call_output line removed (Codex killed while the tool ran; "No tool output found for function call")',
    sent: (body) => calls(body).some((call) => !outputs(body).some((output) => output.call_id === call.call_id)),
    apply: (text) =>
      edit(text, (lines, records) => {
        const index = find(records, 'function_call_output');
        lines.splice(index, 1);
        return [];
      }),
  },
  {
    name: 'call-missing',
    rule: 'tool-result-orphan',
    what: 'the function_call line removed, its output kept (a trimmed history; "No tool call found for function call output")',
    sent: (body) => outputs(body).some((output) => !calls(body).some((call) => call.call_id === output.call_id)),
    apply: (text) =>
      edit(text, (lines, records) => {
        const index = find(records, 'function_call');
        lines.splice(index, 1);
        return [];
      }),
  },
  {
    name: 'output-before-call',
    rule: 'tool-result-orphan',
    what: 'the function_call_output line moved before its function_call',
    sent: (body) => {
      const input = inputOf(body);
      return input.some(
        (item, index) =>
          item?.type === 'function_call_output' &&
          input.findIndex((other) => other?.type === 'function_call' && other.call_id === item.call_id) > index,
      );
    },
    apply: (text) =>
      edit(text, (lines, records) => {
        const call = find(records, 'function_call');
        const output = find(records, 'function_call_output');
        const [moved] = lines.splice(output, 1);
        lines.splice(call, 0, moved ?? '');
        return [call + 1];
      }),
  },
  {
    name: 'reasoning-left-dangling',
    rule: 'reasoning-item-orphan',
    what: 'an encrypted reasoning item after the last assistant message, with nothing it produced after it ("of type \'reasoning\' was provided without its required following item")',
    sent: (body) => {
      const input = inputOf(body);
      return input.some(
        (item, index) =>
          item?.type === 'reasoning' &&
          item.id === 'rs_unstuck_poison' &&
          !(input[index + 1]?.role === 'assistant' || String(input[index + 1]?.type ?? '').endsWith('_call')),
      );
    },
    apply: (text) =>
      edit(text, (lines, records) => {
        let last = -1;
        records.forEach((record, index) => {
          if (isItem(record, 'message') && record?.['payload']?.role === 'assistant') last = index;
        });
        if (last < 0) throw new Error('codex-poisonings: the rollout has no assistant message');
        const record = records[last] as Record<string, any>;
        const reasoning = {
          timestamp: record['timestamp'],
          type: 'response_item',
          payload: {
            type: 'reasoning',
            id: 'rs_unstuck_poison',
            summary: [],
            content: null,
            encrypted_content: 'gAAAAABunstuck-poison',
          },
        };
        lines.splice(last + 1, 0, JSON.stringify(reasoning));
        return [last + 2];
      }),
  },
];
