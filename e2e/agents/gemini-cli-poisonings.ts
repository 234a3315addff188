import { joinLines, jsonlLines } from './agent-process.js';
import type { SessionPoisoning } from './resume-poisoned.js';

/**
 * Poisonings of a Gemini CLI chat file (`~/.gemini/tmp/<project>/chats/session-*.jsonl`: a header
 * line, then message records `{id, timestamp, type: "user" | "gemini", content, toolCalls?}` and
 * `{"$set": …}` updates; a record written again with the same id replaces the earlier one). Every
 * other line is kept byte for byte.
 */

type Content = { role?: string; parts?: any[] };
const contentsOf = (body: any): Content[] => (Array.isArray(body?.contents) ? body.contents : []);
const count = (content: Content | undefined, key: string): number =>
  Array.isArray(content?.parts) ? content.parts.filter((part) => part?.[key] !== undefined).length : 0;
const calls = (content: Content | undefined) => (content?.role === 'model' ? count(content, 'functionCall') : 0);

/** A function-response turn with more responses than the call turn before it has calls. */
const hasExcess = (body: any): boolean =>
  contentsOf(body).some((content, index, all) => {
    const responses = count(content, 'functionResponse');
    return responses > 0 && responses > calls(all[index - 1]);
  });

const lastIndex = (
  records: (Record<string, any> | undefined)[],
  test: (record: Record<string, any>) => boolean,
): number => {
  for (let index = records.length - 1; index >= 0; index -= 1) {
    const record = records[index];
    if (record !== undefined && test(record)) return index;
  }
  throw new Error('gemini-cli-poisonings: the chat file has no such record');
};
const isCallRecord = (record: Record<string, any>) => record['type'] === 'gemini' && Array.isArray(record['toolCalls']);
const isResponseRecord = (record: Record<string, any>) =>
  record['type'] === 'user' &&
  Array.isArray(record['content']) &&
  record['content'].some((part: any) => part?.functionResponse !== undefined);

export const geminiCliPoisonings: readonly SessionPoisoning[] = [
  {
    name: 'as-written',
    rule: 'tool-results-excess',
    what: 'nothing changed: the chat file as Gemini CLI wrote it after one tool call',
    sent: hasExcess,
    apply: (text) => ({ text, lines: [] }),
  },
  {
    name: 'response-record-removed',
    rule: 'tool-results-excess',
    what: "the user record repeating the tool's functionResponse removed (the result stays in the call record's toolCalls[].result)",
    sent: hasExcess,
    apply: (text) => {
      const { lines, records } = jsonlLines(text);
      lines.splice(lastIndex(records, isResponseRecord), 1);
      return { text: joinLines(lines), lines: [] };
    },
  },
  {
    name: 'result-lost',
    rule: 'tool-calls-unanswered',
    what: "the call's result gone: toolCalls[].result dropped and the functionResponse record removed (the CLI killed while the tool ran)",
    sent: (body) =>
      contentsOf(body).some(
        (content, index, all) => calls(content) > 0 && count(all[index + 1], 'functionResponse') === 0,
      ),
    apply: (text) => {
      const { lines, records } = jsonlLines(text);
      const call = lastIndex(records, isCallRecord);
      const record = records[call] as Record<string, any>;
      lines[call] = JSON.stringify({
        ...record,
        toolCalls: record['toolCalls'].map(({ result: _result, ...rest }: Record<string, unknown>) => rest),
      });
      lines.splice(lastIndex(records, isResponseRecord), 1);
      return { text: joinLines(lines), lines: [call + 1] };
    },
  },
  {
    name: 'call-record-duplicated',
    rule: 'tool-call-turn-position',
    what: 'the call record written twice under two ids (a model turn with the functionCall right after another)',
    sent: (body) =>
      contentsOf(body).some((content, index, all) => calls(content) > 0 && all[index - 1]?.role === 'model'),
    apply: (text) => {
      const { lines, records } = jsonlLines(text);
      const call = lastIndex(records, isCallRecord);
      const record = records[call] as Record<string, any>;
      lines.splice(call, 0, JSON.stringify({ ...record, id: `${record['id']}-copy` }));
      return { text: joinLines(lines), lines: [call + 1] };
    },
  },
  {
    name: 'empty-answer-text',
    rule: 'text-block-empty',
    what: "the final answer's content emptied (a model turn whose only text is '')",
    sent: (body) =>
      contentsOf(body).some(
        (content) =>
          content.role === 'model' && Array.isArray(content.parts) && content.parts.some((part) => part?.text === ''),
      ),
    apply: (text) => {
      const { lines, records } = jsonlLines(text);
      const answer = lastIndex(
        records,
        (record) => record['type'] === 'gemini' && typeof record['content'] === 'string' && record['content'] !== '',
      );
      lines[answer] = JSON.stringify({ ...records[answer], content: '' });
      return { text: joinLines(lines), lines: [answer + 1] };
    },
  },
];
