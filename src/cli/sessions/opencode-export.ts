import { UnstuckError } from '../../core/errors.js';
import type { AgentReader, AgentSession } from './agent-session.js';
import { isRecord } from './align-repaired.js';
import type { OpenCodeMessage } from './opencode-history.js';
import { toOpenCodeChat } from './opencode-history.js';
import { sessionProfile } from './opencode-session.js';
import { applyEdit, planWriteback } from './opencode-writeback.js';

/**
 * `opencode export <session>`'s JSON: `{info: {id: "ses_…", …}, messages: [{info: {id, role, …}, parts: [{id, type,
 * …}]}]}`, read as the chat history OpenCode sends for it (opencode-history.ts). A repair is written back into
 * the parts (a tool part's callID or output changed, a duplicated tool part removed); every other field stays as
 * it was. A repair the parts cannot hold is refused with one line, nothing written (the database reader lists
 * them one by one instead).
 */
export const openCodeExportReader: AgentReader = {
  agent: 'opencode',
  label: 'OpenCode',
  detect(_file, text) {
    return /^\s*\{\s*"info"\s*:\s*\{/.test(text.slice(0, 512)) && /"messages"\s*:\s*\[/.test(text);
  },
  read: readOpenCodeExport,
};

function readOpenCodeExport(file: string, text: string): AgentSession {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new UnstuckError('INPUT_INVALID', `not an OpenCode export: not valid JSON (${(error as Error).message})`, {
      file,
      position: '1:1',
    });
  }
  const history = exportHistory(document, file);
  // What is sent depends on the model the next request goes to (opencode-session.ts sessionProfile).
  const { messages, sources } = toOpenCodeChat(history, sessionProfile(history, {}));
  const parts = new Map<string, Record<string, unknown>>();
  for (const message of history) for (const part of message.parts) parts.set(String(part['id']), part);
  const elementOf = new Map(history.map((message, index) => [message.info['id'], index]));
  return {
    agent: 'opencode',
    wire: 'openai-chat',
    native: messages,
    sources: sources.map((source) => [elementOf.get(source.messageId) ?? -1]),
    sourceKind: 'element',
    problems: [],
    write(repaired) {
      const plan = planWriteback(messages, sources, parts, repaired);
      if (plan.unwritable.length > 0)
        throw new UnstuckError(
          'INPUT_INVALID',
          `the repair cannot be written back into OpenCode's parts (${plan.unwritable[0]}${plan.unwritable.length > 1 ? `, and ${plan.unwritable.length - 1} more` : ''}): nothing written`,
          { file },
        );
      const byPart = new Map(plan.edits.map((edit) => [edit.part, edit]));
      const root = document as Record<string, unknown>;
      const out = {
        ...root,
        messages: (root['messages'] as Record<string, unknown>[]).map((message) => ({
          ...message,
          parts: (message['parts'] as Record<string, unknown>[]).flatMap((part) => {
            const edit = byPart.get(String(part['id']));
            if (edit === undefined) return [part];
            return edit.kind === 'delete' ? [] : [applyEdit(part, edit)];
          }),
        })),
      };
      return `${JSON.stringify(out, null, 2)}${text.endsWith('\n') ? '\n' : ''}`;
    },
  };
}

/** The export's messages, each checked for the fields read (an id, a role, a parts array of objects with ids). */
function exportHistory(document: unknown, file: string): OpenCodeMessage[] {
  const fail = (what: string) => new UnstuckError('INPUT_INVALID', `not an OpenCode export: ${what}`, { file });
  if (!isRecord(document) || !isRecord(document['info']) || typeof document['info']['id'] !== 'string')
    throw fail('no "info" object with a session "id"');
  const messages = document['messages'];
  if (!Array.isArray(messages)) throw fail('no "messages" array');
  return messages.map((message, index) => {
    if (!isRecord(message) || !isRecord(message['info']) || !Array.isArray(message['parts']))
      throw fail(`messages[${index}] is not {info, parts}`);
    const info = message['info'];
    if (typeof info['id'] !== 'string' || (info['role'] !== 'user' && info['role'] !== 'assistant'))
      throw fail(`messages[${index}].info has no string id and role user or assistant`);
    const parts = message['parts'] as unknown[];
    parts.forEach((part, at) => {
      if (!isRecord(part) || typeof part['id'] !== 'string' || typeof part['type'] !== 'string')
        throw fail(`messages[${index}].parts[${at}] has no string id and type`);
    });
    return { info, parts: parts as Record<string, unknown>[] };
  });
}
