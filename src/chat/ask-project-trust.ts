import type { TrustQuestion } from './chat-config.js';
import { REORDERING } from './chat-renderer.js';
import type { AskLine } from './create-asking-confirm.js';
import type { TerminalStyle } from './terminal-style.js';

const PREVIEW_LINES = 8;
const PREVIEW_WIDTH = 160;

/**
 * The question the interactive chat asks before it takes a project's sensitive settings: what the
 * file sets, shown whole enough to judge (a long system prompt by its first lines), and what
 * trusting means. Anything but "y"/"yes" declines; the decision is not remembered when declined.
 */
export function createProjectTrustAsk(options: {
  ask: AskLine;
  style: TerminalStyle;
  write(text: string): unknown;
}): (question: TrustQuestion) => Promise<boolean> {
  return async (question) => {
    const { style } = options;
    const lines = [
      style.yellow(`${question.file} in this directory wants to set:`),
      ...question.sets.flatMap(({ key, value }) => describeSetting(key, value)),
      style.dim(`  (${question.path}, sha256 ${question.sha256.slice(0, 12)})`),
      'These decide where your API key and the conversation are sent, and what the model is told.',
      'A cloned repository or a file the model wrote can set them; trust only a file you have read.',
    ];
    options.write(`${lines.join('\n')}\n`);
    const answer = await options.ask(
      style.yellow('Trust this file as it is now (asked again if it changes)? [y]es / [N]o '),
      new AbortController().signal,
    );
    return ['y', 'yes'].includes(answer.trim().toLowerCase());
  };
}

function describeSetting(key: string, value: string | number | boolean): string[] {
  if (key === 'systemPrompt' && typeof value === 'string') {
    const all = value.split('\n');
    const shown = all.slice(0, PREVIEW_LINES).map((line) => `    | ${clip(line)}`);
    const more = all.length > PREVIEW_LINES ? [`    | ... ${all.length - PREVIEW_LINES} more lines`] : [];
    return [`  systemPrompt (${value.length} characters):`, ...shown, ...more];
  }
  const note = key === 'baseURL' ? '  <- your API key would be sent here' : '';
  return [`  ${key}: ${clip(typeof value === 'string' ? value : JSON.stringify(value))}${note}`];
}

/** One line of a file shown in the terminal: control characters made visible, long lines cut. */
function clip(text: string): string {
  // eslint-disable-next-line no-control-regex
  const visible = text
    .replace(
      /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g,
      (char) => `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}`,
    )
    // A right-to-left override could make an attacker's URL read as api.deepseek.com.
    .replace(REORDERING, (char) => `\\u{${char.charCodeAt(0).toString(16)}}`);
  return visible.length <= PREVIEW_WIDTH ? visible : `${visible.slice(0, PREVIEW_WIDTH - 3)}...`;
}
