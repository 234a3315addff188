import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { renderRepairReport } from '../../../src/cli/report/render-repair-report.js';
import { run } from '../../../src/cli/run.js';
import { captureIo } from '../../support/capture-io.js';
import { useTemporaryDirectory } from '../helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const poisoned = fileURLToPath(
  new URL(
    '../../fixtures/agents/claude-code/read-tool-loop.claude-code-2.1.332.text-before-tool-result.jsonl',
    import.meta.url,
  ),
);
const { path } = useTemporaryDirectory('unstuck-report-');
const HOSTILE = `<script>document.title='pwned'</script></style><h1 id="injected">injected</h1><img src=x onerror="document.title='pwned'">`;

/**
 * The page as headless Chromium renders it (Debian's `chromium`; .ci/run installs it): the DOM after load, and
 * what the page wrote to its console (Chromium logs console messages and CSP violations as `CONSOLE` lines).
 */
async function render(file: string): Promise<{ dom: string; console: string[] }> {
  const { stdout, stderr } = await promisify(execFile)(
    CHROMIUM,
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--enable-logging=stderr',
      '--v=0',
      `--user-data-dir=${path('chromium-profile')}`,
      '--dump-dom',
      pathToFileURL(file).href,
    ],
    { maxBuffer: 64 * 1024 * 1024, timeout: 60_000 },
  );
  return { dom: stdout, console: stderr.split('\n').filter((line) => /CONSOLE|Content Security Policy/.test(line)) };
}

/** A Claude Code session, poisoned with a text before its tool_result, whose texts carry markup. */
async function hostileSession(): Promise<string> {
  const lines = (await readFile(poisoned, 'utf8')).split('\n');
  lines[18] = (lines[18] as string).replace('Here is the file.', HOSTILE.replaceAll('"', '\\"'));
  const file = path('hostile.jsonl');
  await writeFile(file, lines.join('\n'));
  return file;
}

describe('the HTML report of a repair', () => {
  test('fix --report: every change, the provider wording, before and after; model text escaped', async () => {
    const file = await hostileSession();
    const report = path('fix.html');
    const io = captureIo();
    assert.equal(await run(['fix', '--report', report, file], io), 0, io.err());
    const html = await readFile(report, 'utf8');
    assert.match(html, /data-kind="message-moved"/);
    assert.match(html, /<td class="wording">messages\.1: `tool_use` ids were found without `tool_result` blocks/);
    assert.match(html, /messages\[2\]<\/a> \(line 19\)/);
    assert.ok(!html.includes('<script'), 'no script element, not even escaped markup left raw');
    assert.ok(!html.includes('<h1 id="injected">'));
    assert.ok(html.includes('&#60;script&#62;document.title=&#39;pwned&#39;&#60;/script&#62;&#60;/style&#62;'));
    assert.ok(!/https?:\/\//.test(html.replace(/content="[^"]*"/g, '')), 'no network resource');
  });

  test('an escape for every character HTML gives meaning to', () => {
    const html = renderRepairReport([
      {
        file: `a"b'<c>&.jsonl`,
        wire: 'anthropic-messages',
        label: 'messages',
        input: [{ role: 'user', content: `&<>"'` }],
        output: [{ role: 'user', content: `&<>"'` }],
        before: [],
        changes: [],
        remaining: [],
        problems: [],
      },
    ]);
    assert.ok(html.includes('a&#34;b&#39;&#60;c&#62;&#38;.jsonl'));
    assert.ok(html.includes('&#38;&#60;&#62;&#34;&#39;'));
  });

  test('in headless Chromium: loads with no console errors, shows the repair, the hostile text is inert', {
    skip: existsSync(CHROMIUM) ? false : 'chromium is not installed (.ci/run installs it)',
  }, async () => {
    const file = await hostileSession();
    const report = path('chromium.html');
    assert.equal(await run(['fix', '--report', report, file], captureIo()), 0);
    const { dom, console } = await render(report);
    assert.deepEqual(console, []);
    // The DOM Chromium built: the title is the report's (no script ran), no injected heading, no script element.
    assert.match(dom, /<title>unstuck repair report<\/title>/);
    assert.ok(!dom.includes('<h1 id="injected">'));
    assert.ok(!/<script/i.test(dom));
    assert.ok(!/<img/i.test(dom));
    assert.match(
      dom,
      /<strong data-count="problems">1<\/strong> problem, <strong data-count="changes">1<\/strong> change/,
    );
    // The change before and after: the user message's blocks were [text, tool_result], are [tool_result, text].
    const diff = dom.slice(dom.indexOf('data-step="changed"'), dom.indexOf('<h3>The history'));
    const before = diff.slice(diff.indexOf('class="before"'), diff.indexOf('class="after"'));
    const after = diff.slice(diff.indexOf('class="after"'));
    assert.ok(before.includes('tool_result') && after.includes('tool_result'));
    assert.ok(before.indexOf('&lt;script&gt;') < before.indexOf('tool_result'), before);
    assert.ok(after.indexOf('tool_result') < after.indexOf('&lt;script&gt;'), after);
  });

  test('the console check can fail: a page with a broken script shows up in it', {
    skip: existsSync(CHROMIUM) ? false : 'chromium is not installed (.ci/run installs it)',
  }, async () => {
    const page = path('broken.html');
    await writeFile(page, '<!doctype html><title>x</title><script>console.error("from the page"); nope(</script>');
    const { console } = await render(page);
    assert.ok(console.length > 0, 'a console error is seen');
  });
});
