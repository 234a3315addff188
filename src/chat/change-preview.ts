import { visible } from './chat-renderer.js';
import { readSmallFile } from './read-small-file.js';
import type { ToolCallInfo } from './tool-call-context.js';
import { resolveInWorkspace } from './tools/resolve-in-workspace.js';

/** At most this many removed and this many added lines are shown before a change is allowed. */
const SHOWN_PER_SIDE = 8;
const WIDTH = 160;

/**
 * What a write or an edit will change, as a short diff to show before the person allows it: the
 * lines that differ (common leading and trailing lines left out, found in linear time), `-` for
 * what goes, `+` for what comes, each side cut at SHOWN_PER_SIDE lines with a count of the rest.
 * An empty list for other tools, or when the arguments are not what the tool expects (the tool
 * then fails on its own).
 */
export async function previewChange(call: ToolCallInfo, root: string): Promise<string[]> {
  const args = call.args !== null && typeof call.args === 'object' ? (call.args as Record<string, unknown>) : {};
  if (call.name === 'edit_file' && typeof args['old_text'] === 'string' && typeof args['new_text'] === 'string') {
    return diffLines(args['old_text'], args['new_text']);
  }
  if (call.name === 'write_file' && typeof args['content'] === 'string' && typeof args['path'] === 'string') {
    let before = '';
    try {
      const read = await readSmallFile(await resolveInWorkspace(root, args['path']));
      if (read.kind === 'text') before = read.text;
      else if (read.kind === 'unreadable')
        return [`(the current content cannot be shown: ${read.reason})`, ...diffLines('', args['content'])];
    } catch {
      return [];
    }
    return diffLines(before, args['content']);
  }
  return [];
}

export function diffLines(before: string, after: string): string[] {
  if (before === after) return ['(no change)'];
  const old = before === '' ? [] : before.replace(/\n$/, '').split('\n');
  const next = after === '' ? [] : after.replace(/\n$/, '').split('\n');
  let start = 0;
  while (start < old.length && start < next.length && old[start] === next[start]) start += 1;
  let end = 0;
  while (
    end < old.length - start &&
    end < next.length - start &&
    old[old.length - 1 - end] === next[next.length - 1 - end]
  )
    end += 1;
  const removed = old.slice(start, old.length - end);
  const added = next.slice(start, next.length - end);
  const lines: string[] = [];
  if (start > 0 && (removed.length > 0 || added.length > 0)) lines.push(`@@ line ${start + 1}`);
  lines.push(...side('-', removed), ...side('+', added));
  if (lines.length === 0) lines.push('(only the line ending at the end changes)');
  return lines;
}

function side(mark: string, lines: string[]): string[] {
  const shown = lines.slice(0, SHOWN_PER_SIDE).map((line) => {
    const text = visible(line);
    return `${mark} ${text.length <= WIDTH ? text : `${text.slice(0, WIDTH - 3)}...`}`;
  });
  if (lines.length > SHOWN_PER_SIDE) shown.push(`${mark} ... ${lines.length - SHOWN_PER_SIDE} more lines`);
  return shown;
}
