import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createChatRenderer } from '../../src/chat/chat-renderer.js';
import { blockEnd, createMarkdownStream } from '../../src/chat/markdown-stream.js';
import { createTerminalStyle } from '../../src/chat/terminal-style.js';

const strip = (text: string): string => text.replace(/\x1b\[[0-9;]*m/g, '');

function stream(): { push(text: string): void; flush(): void; written: string[] } {
  const written: string[] = [];
  const markdown = createMarkdownStream({ write: (text) => written.push(text), width: 80 });
  return { push: (text) => markdown.push(text), flush: () => markdown.flush(), written };
}

describe('markdown on the terminal, a finished block at a time', () => {
  it('finds where a block ends: a blank line outside a code fence', () => {
    assert.equal(blockEnd('one line'), -1);
    assert.equal(blockEnd('a paragraph\n'), -1);
    assert.equal(blockEnd('a paragraph\n\nnext'), 13);
    assert.equal(blockEnd('\n\nlead blank lines\n'), -1, 'blank lines before any content end nothing');
    assert.equal(
      blockEnd('```js\nconst a = 1;\n\nconst b = 2;\n```\n'),
      -1,
      'a blank line inside a fence does not end the block',
    );
    assert.equal(blockEnd('```js\nconst a = 1;\n\n```\n\nafter'), 25);
    assert.equal(blockEnd('~~~\n```\n\n~~~\n\n'), 14, 'only the fence that opened closes');
  });

  it('draws headings, lists and code blocks as each one is finished, not before', () => {
    const md = stream();
    md.push('# Plan\n');
    assert.deepEqual(md.written, [], 'a heading waits for its block to end');
    md.push('\n- read the con');
    assert.equal(md.written.length, 1);
    assert.match(strip(md.written[0] ?? ''), /Plan/);
    md.push('fig\n- fix the import\n\n```ts\nimport { a } from "./a.js";\n\n');
    assert.equal(md.written.length, 2, 'the list is drawn; the open code block is held');
    assert.match(strip(md.written[1] ?? ''), /\* read the config\n\s*\* fix the import/);
    md.push('a();\n```\n');
    md.flush();
    assert.equal(md.written.length, 3);
    const code = strip(md.written[2] ?? '');
    assert.match(code, /import \{ a \} from "\.\/a\.js";/);
    assert.match(code, /a\(\);/);
    assert.ok(!code.includes('```'), 'the fence is drawn as a code block');
  });

  it('streams a long code block in small pieces in linear time', () => {
    const md = stream();
    const line = 'const value = compute(input, options); // a line of code\n';
    const body = `\`\`\`js\n${line.repeat(20_000)}\`\`\`\n`;
    const started = performance.now();
    for (let index = 0; index < body.length; index += 16) md.push(body.slice(index, index + 16));
    md.flush();
    const elapsed = performance.now() - started;
    assert.equal(md.written.length, 1);
    assert.ok(elapsed < 5_000, `took ${elapsed.toFixed(0)} ms`);
  });

  it('in the renderer: answers go through the stream, and a tool line flushes what is pending first', () => {
    const out: string[] = [];
    const writer = { write: (text: string) => out.push(text) };
    const style = createTerminalStyle(true);
    const spinner = { start() {}, stop() {}, running: false };
    const markdown = createMarkdownStream({ write: (text) => writer.write(text), width: 80 });
    const renderer = createChatRenderer({
      answer: writer,
      notes: writer,
      style,
      spinner,
      reasoning: true,
      fancy: true,
      markdown,
    });
    renderer.handle({ type: 'text-delta', text: 'Looking at **the file**' });
    assert.deepEqual(out, []);
    renderer.handle({ type: 'tool-call-start', id: 'c1', name: 'read_file', arguments: '{"path":"a.ts"}' });
    const text = strip(out.join(''));
    assert.match(
      text,
      /^Looking at the file\n.*read_file/s,
      'the pending paragraph is drawn (bold, no asterisks) before the tool line',
    );
    renderer.handle({ type: 'tool-call-end', id: 'c1', name: 'read_file', result: 'ok', isError: false });
    renderer.handle({ type: 'text-delta', text: '1. first\n2. second' });
    renderer.handle({ type: 'turn-end', reason: 'stop' });
    assert.match(strip(out.join('')), /1\. first\n\s*2\. second\n$/);
  });
});
