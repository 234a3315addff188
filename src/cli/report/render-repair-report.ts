import { alignRepaired, isRecord } from '../sessions/align-repaired.js';

export interface ReportViolation {
  rule: string;
  index: number;
  toolCallId?: string;
  /** The provider's own wording. */
  message: string;
}

export interface ReportChange {
  kind: string;
  index: number;
  toolCallId?: string;
  detail: string;
}

/** One history in the report: what it was, what was wrong, what was changed, what it is now. */
export interface ReportEntry {
  file: string;
  /** The agent whose session file it is (a label), if any. */
  agent?: string;
  wire: string;
  /** What the history's elements are called (messages, contents, input). */
  label: string;
  input: readonly unknown[];
  output: readonly unknown[];
  before: readonly ReportViolation[];
  changes: readonly ReportChange[];
  remaining: readonly (ReportViolation & { why: string })[];
  problems: readonly { line?: number; why: string }[];
  /** For each input element, where it is in the file (lines of a JSONL session, elements of a JSON array). */
  sources?: readonly (readonly number[])[];
  sourceKind?: 'line' | 'element';
  /** What the provider answered about this history (a proxied request's 400 before its retry), as it came. */
  providerErrors?: readonly string[];
}

/** Texts longer than this are collapsed (a <details> the reader opens). */
const COLLAPSE_CHARS = 600;

/**
 * One self-contained HTML page: no scripts, no network resources, every text from the history escaped. A summary,
 * then per history its problems (rule, the provider's wording, where), its changes with each touched element before
 * and after side by side, and the whole history as a timeline with long texts collapsed.
 */
export function renderRepairReport(
  entries: readonly ReportEntry[],
  options: { title?: string; notes?: readonly string[] } = {},
): string {
  const title = options.title ?? 'unstuck repair report';
  const totalProblems = entries.reduce((sum, entry) => sum + entry.before.length + entry.problems.length, 0);
  const totalChanges = entries.reduce((sum, entry) => sum + entry.changes.length, 0);
  const totalRemaining = entries.reduce((sum, entry) => sum + entry.remaining.length, 0);
  const parts: string[] = [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8">',
    // No network, no scripts: a page that cannot fetch or run anything, whatever the history holds.
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(title)}</title>`,
    `<style>${STYLE}</style></head><body>`,
    `<h1>${escapeHtml(title)}</h1>`,
    `<section class="summary" id="summary"><p><strong>${entries.length}</strong> histor${entries.length === 1 ? 'y' : 'ies'}, <strong data-count="problems">${totalProblems}</strong> problem${totalProblems === 1 ? '' : 's'}, <strong data-count="changes">${totalChanges}</strong> change${totalChanges === 1 ? '' : 's'}, <strong data-count="remaining">${totalRemaining}</strong> remaining.</p>`,
    ...(options.notes ?? []).map((note) => `<p class="note">${escapeHtml(note)}</p>`),
    '<table><thead><tr><th>file</th><th>agent</th><th>wire</th><th>elements</th><th>problems</th><th>changes</th><th>remaining</th></tr></thead><tbody>',
  ];
  entries.forEach((entry, at) => {
    parts.push(
      `<tr><td><a href="#s${at}">${escapeHtml(entry.file)}</a></td><td>${escapeHtml(entry.agent ?? '')}</td><td>${escapeHtml(entry.wire)}</td><td>${entry.input.length}</td><td>${entry.before.length + entry.problems.length}</td><td>${entry.changes.length}</td><td>${entry.remaining.length}</td></tr>`,
    );
  });
  parts.push('</tbody></table></section>');
  entries.forEach((entry, at) => {
    parts.push(renderEntry(entry, at));
  });
  parts.push('</body></html>\n');
  return parts.join('\n');
}

function renderEntry(entry: ReportEntry, at: number): string {
  const out: string[] = [`<section class="session" id="s${at}">`, `<h2>${escapeHtml(entry.file)}</h2>`];
  const where = (index: number) => {
    const lines = entry.sources?.[index];
    const line =
      lines === undefined || lines.length === 0
        ? ''
        : ` (${entry.sourceKind ?? 'line'}${lines.length === 1 ? '' : 's'} ${lines.join(', ')})`;
    return `<a href="#s${at}-m${index}">${escapeHtml(entry.label)}[${index}]</a>${escapeHtml(line)}`;
  };
  if (entry.problems.length > 0) {
    out.push('<h3>Lines that cannot be read (kept as they are)</h3><ul class="damaged">');
    for (const problem of entry.problems) out.push(`<li>line ${problem.line ?? '?'}: ${escapeHtml(problem.why)}</li>`);
    out.push('</ul>');
  }
  out.push('<h3>What was wrong</h3>');
  if (entry.before.length === 0) out.push('<p class="none">Nothing: the provider accepts this history.</p>');
  else {
    out.push(
      '<table class="problems"><thead><tr><th>where</th><th>rule</th><th>the provider says</th></tr></thead><tbody>',
    );
    for (const violation of entry.before)
      out.push(
        `<tr class="problem"><td>${where(violation.index)}</td><td><code>${escapeHtml(violation.rule)}</code>${violation.toolCallId === undefined ? '' : ` <code>${escapeHtml(violation.toolCallId)}</code>`}</td><td class="wording">${escapeHtml(violation.message)}</td></tr>`,
      );
    out.push('</tbody></table>');
  }
  if (entry.providerErrors !== undefined && entry.providerErrors.length > 0) {
    out.push('<h3>What the provider answered</h3>');
    for (const text of entry.providerErrors) out.push(`<pre class="provider-error">${collapse(text)}</pre>`);
  }
  out.push('<h3>What was changed</h3>');
  if (entry.changes.length === 0) out.push('<p class="none">Nothing.</p>');
  else {
    out.push('<table class="changes"><thead><tr><th>where</th><th>change</th><th>detail</th></tr></thead><tbody>');
    for (const change of entry.changes)
      out.push(
        `<tr class="change" data-kind="${escapeHtml(change.kind)}"><td>${where(change.index)}</td><td><code>${escapeHtml(change.kind)}</code></td><td>${escapeHtml(change.detail)}</td></tr>`,
      );
    out.push('</tbody></table>');
  }
  if (entry.remaining.length > 0) {
    out.push('<h3>Still wrong</h3><ul class="remaining">');
    for (const left of entry.remaining)
      out.push(
        `<li>${where(left.index)} <code>${escapeHtml(left.rule)}</code>: ${escapeHtml(left.message)} (${escapeHtml(left.why)})</li>`,
      );
    out.push('</ul>');
  }

  const steps = entry.changes.length === 0 ? [] : alignRepaired(entry.input, entry.output);
  const movedInputs = new Set(
    steps.flatMap((step) => (step.kind === 'added' && step.from !== undefined ? [step.from] : [])),
  );
  // A moved element is shown once, where it went.
  const touched = steps.filter(
    (step) => step.kind !== 'same' && !(step.kind === 'dropped' && movedInputs.has(step.input)),
  );
  if (touched.length > 0) {
    out.push('<h3>Before and after</h3><div class="diffs">');
    for (const step of touched) {
      const moved = step.kind === 'added' && step.from !== undefined;
      const before =
        step.kind === 'added'
          ? step.from === undefined
            ? '<p class="none">(not there)</p>'
            : `<p class="none">(was at ${where(step.from)})</p>`
          : renderElement(entry.input[step.input]);
      const after = step.kind === 'dropped' ? '<p class="none">(removed)</p>' : renderElement(step.output);
      const name =
        step.kind === 'added'
          ? step.from === undefined
            ? `added before ${escapeHtml(entry.label)}[${step.before}]`
            : `moved ${where(step.from)} to before ${escapeHtml(entry.label)}[${step.before}]`
          : `${step.kind} ${where(step.input)}`;
      out.push(
        `<div class="diff" data-step="${moved ? 'moved' : step.kind}"><h4>${name}</h4><div class="pair"><div class="before"><h5>before</h5>${before}</div><div class="after"><h5>after</h5>${after}</div></div></div>`,
      );
    }
    out.push('</div>');
  }

  const marks = new Map<number, string[]>();
  const mark = (index: number, text: string) => {
    const list = marks.get(index) ?? [];
    list.push(text);
    marks.set(index, list);
  };
  for (const violation of entry.before) mark(violation.index, `${violation.rule}: ${violation.message}`);
  for (const change of entry.changes) mark(change.index, `${change.kind}: ${change.detail}`);
  out.push(`<h3>The history (${entry.input.length} ${escapeHtml(entry.label)})</h3><ol class="timeline" start="0">`);
  entry.input.forEach((element, index) => {
    const notes = marks.get(index);
    out.push(
      `<li id="s${at}-m${index}" class="${notes === undefined ? '' : 'marked'}">${notes === undefined ? '' : `<ul class="notes">${notes.map((note) => `<li>${escapeHtml(note)}</li>`).join('')}</ul>`}${renderElement(element)}</li>`,
    );
  });
  out.push('</ol></section>');
  return out.join('\n');
}

/** One history element: its role (or type), then its blocks: text, tool calls and their results, the rest as JSON. */
function renderElement(element: unknown): string {
  if (!isRecord(element)) return `<pre class="raw">${collapse(json(element))}</pre>`;
  const role = typeof element['role'] === 'string' ? element['role'] : String(element['type'] ?? '?');
  const body: string[] = [];
  const content = element['content'];
  if (typeof content === 'string') body.push(textBlock(content));
  else if (Array.isArray(content)) for (const block of content) body.push(renderBlock(block));
  else if (content !== undefined && content !== null) body.push(`<pre>${collapse(json(content))}</pre>`);
  if (Array.isArray(element['tool_calls']))
    for (const call of element['tool_calls']) {
      const fn = isRecord(call) && isRecord(call['function']) ? call['function'] : {};
      body.push(
        `<div class="block tool-use"><span class="tag">call</span> <code>${escapeHtml(String(fn['name'] ?? '?'))}</code> <code class="id">${escapeHtml(String(isRecord(call) ? (call['id'] ?? '') : ''))}</code><pre>${collapse(String(fn['arguments'] ?? ''))}</pre></div>`,
      );
    }
  if (typeof element['tool_call_id'] === 'string')
    body.unshift(`<div class="tag">result of <code class="id">${escapeHtml(element['tool_call_id'])}</code></div>`);
  if (Array.isArray(element['parts'])) for (const part of element['parts']) body.push(renderBlock(part));
  if (body.length === 0 && !('content' in element)) body.push(`<pre>${collapse(json(element))}</pre>`);
  return `<div class="element role-${cssName(role)}"><div class="role">${escapeHtml(role)}</div>${body.join('')}</div>`;
}

function renderBlock(block: unknown): string {
  if (!isRecord(block)) return `<pre class="raw">${collapse(json(block))}</pre>`;
  switch (block['type']) {
    case 'text':
      return textBlock(typeof block['text'] === 'string' ? block['text'] : json(block['text']));
    case 'tool_use':
      return `<div class="block tool-use"><span class="tag">tool_use</span> <code>${escapeHtml(String(block['name'] ?? '?'))}</code> <code class="id">${escapeHtml(String(block['id'] ?? ''))}</code><pre>${collapse(typeof block['input'] === 'string' ? block['input'] : json(block['input']))}</pre></div>`;
    case 'tool_result': {
      const content = block['content'];
      const text =
        typeof content === 'string'
          ? content
          : Array.isArray(content)
            ? content
                .map((part) => (isRecord(part) && typeof part['text'] === 'string' ? part['text'] : json(part)))
                .join('\n')
            : json(content);
      return `<div class="block tool-result${block['is_error'] === true ? ' error' : ''}"><span class="tag">tool_result</span> <code class="id">${escapeHtml(String(block['tool_use_id'] ?? ''))}</code><pre>${collapse(text)}</pre></div>`;
    }
    case 'thinking':
    case 'redacted_thinking':
      return `<details class="block thinking"><summary>${escapeHtml(String(block['type']))}</summary><pre>${escapeHtml(String(block['thinking'] ?? ''))}</pre></details>`;
    default:
      return `<div class="block other"><span class="tag">${escapeHtml(String(block['type'] ?? 'part'))}</span><pre>${collapse(json(block))}</pre></div>`;
  }
}

function textBlock(text: string): string {
  return `<div class="block text"><pre>${collapse(text)}</pre></div>`;
}

/** A long text shows its start; the rest is one click away. */
function collapse(text: string): string {
  if (text.length <= COLLAPSE_CHARS) return escapeHtml(text);
  return `${escapeHtml(text.slice(0, 200))}<details><summary>… ${text.length} characters</summary>${escapeHtml(text)}</details>`;
}

function json(value: unknown): string {
  try {
    return JSON.stringify(value, null, 1) ?? String(value);
  } catch {
    return String(value);
  }
}

function cssName(text: string): string {
  return text.replace(/[^a-z0-9_-]/gi, '_');
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

const STYLE = `
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em auto;max-width:1200px;padding:0 1em;color:#1b1b1b;background:#fafafa}
h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;padding-bottom:.2em;word-break:break-all}
table{border-collapse:collapse;width:100%;margin:.5em 0}td,th{border:1px solid #ddd;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#eee}.summary{background:#fff;border:1px solid #ccc;padding:.5em 1em}
tr.problem td.wording{color:#9b1c1c}tr.change code{color:#1d4ed8}.none{color:#666;font-style:italic}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:.5em}.before{background:#fff1f1}.after{background:#eefaf0}
.before,.after{border:1px solid #ddd;padding:.3em .5em;overflow:auto}h4{margin:.8em 0 .3em}h5{margin:0 0 .3em;color:#555}
.timeline{padding-left:3.5em}.timeline>li{margin:.3em 0}.timeline>li.marked{outline:2px solid #e0a800;background:#fffbea}
.element{border-left:4px solid #999;padding:.1em .5em;background:#fff}.role{font-weight:600;font-size:.85em;color:#555}
.role-user{border-color:#2563eb}.role-assistant{border-color:#16a34a}.role-tool{border-color:#9333ea}.role-system{border-color:#555}
.block{margin:.2em 0}.tag{font-size:.8em;background:#eee;border-radius:3px;padding:0 .3em}.tool-result.error .tag{background:#fecaca}
pre{white-space:pre-wrap;word-break:break-word;margin:.2em 0;font:12px/1.35 ui-monospace,monospace}
.provider-error{background:#fff1f1;border:1px solid #f3c4c4;padding:.3em .5em}.note{color:#8a5a00}
.notes{margin:0 0 .2em;padding-left:1.2em;color:#8a5a00}.id{color:#666}
`;
