import { Marked } from 'marked';
import { markedTerminal } from 'marked-terminal';

/** Streamed Markdown, drawn for a terminal one finished block at a time. */
export interface MarkdownStream {
  /** Takes the next piece of the answer; writes every block it completes. */
  push(text: string): void;
  /** The answer is over (or something else is about to be printed): draws what is left. */
  flush(): void;
  /** Whether anything was written since the last flush left the cursor at a line start. */
  readonly pending: boolean;
}

/**
 * Markdown rendering by marked + marked-terminal (see docs/decisions/chat-markdown.md). A block
 * is finished at a blank line outside a code fence: it is drawn then, so the answer still streams,
 * paragraph by paragraph, and a heading, list or code block is never drawn half-way. One Marked
 * instance per stream: the global one is left alone.
 */
export function createMarkdownStream(options: { write: (text: string) => void; width?: number }): MarkdownStream {
  const marked = new Marked();
  // The plugin's renderer type predates marked 18's extension type; the object is what marked.use takes.
  marked.use(
    markedTerminal({
      showSectionPrefix: false,
      reflowText: true,
      width: Math.max(20, Math.min(options.width ?? 80, 120)),
      tab: 2,
      emoji: false,
    }) as Parameters<Marked['use']>[0],
  );
  // The block being received: its finished lines, and the line still coming. Only each new piece
  // is searched for line ends, so an answer costs its length once however it is cut.
  let lines: string[] = [];
  let partial = '';
  let state: BlockState = { fence: undefined, sawContent: false };
  let drawn = 0;

  const draw = (block: string): void => {
    if (block.trim() === '') return;
    let rendered: string;
    try {
      rendered = marked.parse(block, { async: false });
    } catch {
      rendered = block; // Markdown the library cannot read is shown as it came
    }
    options.write(`${drawn > 0 ? '\n' : ''}${rendered.replace(/\s+$/, '')}\n`);
    drawn += 1;
  };

  return {
    push(text) {
      let from = 0;
      for (;;) {
        const newline = text.indexOf('\n', from);
        if (newline < 0) {
          partial += text.slice(from);
          return;
        }
        const line = partial + text.slice(from, newline);
        partial = '';
        from = newline + 1;
        lines.push(line);
        if (endsBlock(line, state)) {
          draw(`${lines.join('\n')}\n`);
          lines = [];
          state = { fence: undefined, sawContent: false };
        }
      }
    },
    flush() {
      const rest = lines.length === 0 ? partial : `${lines.join('\n')}\n${partial}`;
      lines = [];
      partial = '';
      state = { fence: undefined, sawContent: false };
      draw(rest);
      drawn = 0;
    },
    get pending() {
      return lines.length > 0 || partial !== '';
    },
  };
}

interface BlockState {
  fence: string | undefined;
  sawContent: boolean;
}

/** Reads one finished line of a block: true when it is the blank line that ends the block. */
function endsBlock(line: string, state: BlockState): boolean {
  const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
  if (state.fence !== undefined) {
    if (
      marker !== undefined &&
      marker[0] === state.fence[0] &&
      marker.length >= state.fence.length &&
      line.trim() === marker
    )
      state.fence = undefined;
    return false;
  }
  if (marker !== undefined) {
    state.fence = marker;
    state.sawContent = true;
    return false;
  }
  if (line.trim() === '') return state.sawContent;
  state.sawContent = true;
  return false;
}

/**
 * Where the first finished block of `text` ends (just after its blank line), -1 when none is
 * finished yet. Lines inside a ``` or ~~~ fence never end a block.
 */
export function blockEnd(text: string): number {
  const state: BlockState = { fence: undefined, sawContent: false };
  let from = 0;
  for (;;) {
    const newline = text.indexOf('\n', from);
    if (newline < 0) return -1;
    if (endsBlock(text.slice(from, newline), state)) return newline + 1;
    from = newline + 1;
  }
}
