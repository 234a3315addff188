/**
 * Where JSON text first goes wrong, as an offset. V8 names a position for some syntax errors and
 * only a snippet for others ("Unexpected token 'x', ... is not valid JSON"); a person needs a
 * line and column either way. Only called once parsing has already failed, so speed is no concern.
 */
export function findJsonErrorOffset(text: string): number {
  let at = 0;
  const fail = (): never => {
    throw new JsonStop(at);
  };
  const space = () => {
    while (at < text.length && ' \t\r\n'.includes(text[at] as string)) at += 1;
  };
  const literal = (word: string) => {
    for (const char of word) {
      if (text[at] !== char) fail();
      at += 1;
    }
  };
  const string = () => {
    at += 1;
    while (at < text.length) {
      const char = text[at] as string;
      if (char === '"') {
        at += 1;
        return;
      }
      if (char === '\\') {
        const next = text[at + 1];
        if (next === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(at + 2, at + 6))) {
            at += 1;
            fail();
          }
          at += 6;
          continue;
        }
        if (next === undefined || !'"\\/bfnrt'.includes(next)) {
          at += 1;
          fail();
        }
        at += 2;
        continue;
      }
      if (char < ' ') fail();
      at += 1;
    }
    fail();
  };
  const number = () => {
    const match = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(at, at + 400));
    if (match === null || match[0] === '' || match[0] === '-') fail();
    at += (match as RegExpExecArray)[0].length;
  };
  /**
   * Values are walked with an explicit stack of open containers, not by recursion: a document
   * nested 100,000 deep (which JSON.parse itself reads) must get a position, not a stack overflow.
   */
  const walk = (): void => {
    const open: ('{' | '[')[] = [];
    for (;;) {
      // A value is expected here.
      space();
      const char = text[at];
      if (char === '{' || char === '[') {
        at += 1;
        space();
        if (text[at] === (char === '{' ? '}' : ']')) {
          at += 1;
        } else {
          open.push(char);
          if (char === '{') key();
          continue;
        }
      } else if (char === '"') string();
      else if (char === 't') literal('true');
      else if (char === 'f') literal('false');
      else if (char === 'n') literal('null');
      else number();
      // A value has ended: a comma goes on with the container, a closer ends it.
      for (;;) {
        const container = open[open.length - 1];
        if (container === undefined) return;
        space();
        if (text[at] === ',') {
          at += 1;
          if (container === '{') key();
          break;
        }
        if (text[at] === (container === '{' ? '}' : ']')) {
          at += 1;
          open.pop();
          continue;
        }
        fail();
      }
    }
  };
  const key = (): void => {
    space();
    if (text[at] !== '"') fail();
    string();
    space();
    if (text[at] !== ':') fail();
    at += 1;
  };
  try {
    walk();
    space();
    if (at < text.length) fail();
  } catch (error) {
    if (error instanceof JsonStop) return error.offset;
    throw error;
  }
  return -1;
}

class JsonStop {
  constructor(readonly offset: number) {}
}

/** 1-based line and column of an offset. */
export function lineAndColumn(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return `${line}:${offset - before.lastIndexOf('\n')}`;
}

/** Offset of the bracket that opens level `depth + 1` of nesting, or -1 if the text never nests that deep. */
export function findNestingOffset(text: string, depth: number): number {
  let level = 0;
  for (let at = 0; at < text.length; at += 1) {
    const char = text.charCodeAt(at);
    if (char === 0x22 /* " */) {
      for (at += 1; at < text.length && text.charCodeAt(at) !== 0x22; at += 1)
        if (text.charCodeAt(at) === 0x5c /* \ */) at += 1;
    } else if (char === 0x5b || char === 0x7b) {
      level += 1;
      if (level > depth) return at;
    } else if (char === 0x5d || char === 0x7d) {
      level -= 1;
    }
  }
  return -1;
}
