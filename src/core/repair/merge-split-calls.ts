import { hasToolCalls, isEmptyContent, type Message, textOf } from '../messages.js';
import { copyOf, type Entry, type RepairContext } from './context.js';

/**
 * Parallel calls split across consecutive assistant messages (each with calls, no results between)
 * whose results follow the last of them: merged back into one assistant message.
 */
export function mergeSplitCalls(entries: Entry[], context: RepairContext, copied: Set<Message>): Entry[] {
  let out: Entry[] | undefined;
  for (let index = 0; index < entries.length; index += 1) {
    const entry = entries[index] as Entry;
    const next = entries[index + 1];
    if (!hasToolCalls(entry.message) || next === undefined || !hasToolCalls(next.message)) {
      out?.push(entry);
      continue;
    }
    // A run of assistant-with-calls messages: merge it when the results after it answer the first one.
    let end = index + 1;
    while (end + 1 < entries.length && hasToolCalls((entries[end + 1] as Entry).message)) end += 1;
    const firstIds = new Set(
      (entry.message.tool_calls ?? []).map((call) => call?.id).filter((id) => typeof id === 'string' && id !== ''),
    );
    let answersFirst = false;
    for (
      let cursor = end + 1;
      cursor < entries.length && (entries[cursor] as Entry).message.role === 'tool';
      cursor += 1
    ) {
      if (firstIds.has((entries[cursor] as Entry).message.tool_call_id)) answersFirst = true;
    }
    if (!answersFirst) {
      out?.push(entry);
      continue;
    }
    out ??= entries.slice(0, index);
    const merged = copyOf(entry, copied);
    const toolCalls = (merged.tool_calls ?? []).slice(); // one array for the whole run: appending run by run would copy it each time
    merged.tool_calls = toolCalls;
    for (let cursor = index + 1; cursor <= end; cursor += 1) {
      const other = (entries[cursor] as Entry).message;
      for (const call of other.tool_calls ?? []) toolCalls.push(call);
      if (!isEmptyContent(other.content))
        merged.content = isEmptyContent(merged.content)
          ? (other.content ?? null)
          : `${textOf(merged.content)}\n${textOf(other.content)}`;
      if (typeof other.reasoning_content === 'string' && other.reasoning_content !== '') {
        merged.reasoning_content =
          typeof merged.reasoning_content === 'string' && merged.reasoning_content !== ''
            ? `${merged.reasoning_content}\n${other.reasoning_content}`
            : other.reasoning_content;
      }
      context.note({
        kind: 'parallel-calls-merged',
        index: (entries[cursor] as Entry).origin,
        detail: `its ${(other.tool_calls ?? []).length} call(s) merged into the assistant message at input index ${entry.origin}, whose results follow them`,
      });
    }
    context.note({
      kind: 'parallel-calls-merged',
      index: entry.origin,
      detail: `received the calls of the assistant message(s) after it, up to input index ${(entries[end] as Entry).origin}`,
    });
    out.push(entry);
    index = end;
  }
  return out ?? entries;
}
