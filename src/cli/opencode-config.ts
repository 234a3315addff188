import { existsSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { UnstuckError } from '../core/index.js';

/** Larger config files are refused (OpenCode's are a few kilobytes). */
const MAX_CONFIG_BYTES = 1024 * 1024;

/**
 * The providers OpenCode talks to by default, with the base URL its AI SDK provider uses when the
 * config sets none (`@ai-sdk/anthropic` …/v1, `@ai-sdk/openai` …/v1, `@ai-sdk/google` …/v1beta),
 * the request path appended to it.
 */
export const OPENCODE_DEFAULT_PROVIDERS: Readonly<Record<string, string>> = {
  anthropic: 'https://api.anthropic.com/v1',
  openai: 'https://api.openai.com/v1',
  google: 'https://generativelanguage.googleapis.com/v1beta',
};

type Json = Record<string, unknown>;

/**
 * Each provider's `options.baseURL` as OpenCode would see it for a run from `cwd`: its config
 * layers in the order it merges them (the global `config.json`, `opencode.json`, `opencode.jsonc`
 * under `$XDG_CONFIG_HOME/opencode`; `OPENCODE_CONFIG`; the project's `opencode.json(c)` from the
 * repository root down to `cwd`, unless `OPENCODE_DISABLE_PROJECT_CONFIG`; `OPENCODE_CONFIG_CONTENT`
 * last), a later one winning. `{env:NAME}` in a value is the variable's value, as OpenCode reads it.
 */
export function readOpencodeBaseUrls(env: NodeJS.ProcessEnv, cwd: string): Map<string, string> {
  const files: string[] = [];
  const configHome = env['XDG_CONFIG_HOME'] || join(env['HOME'] || homedir(), '.config');
  for (const name of ['config.json', 'opencode.json', 'opencode.jsonc']) files.push(join(configHome, 'opencode', name));
  if (env['OPENCODE_CONFIG']) files.push(env['OPENCODE_CONFIG']);
  const disabled = env['OPENCODE_DISABLE_PROJECT_CONFIG'];
  if (disabled === undefined || disabled === '' || disabled === '0' || disabled === 'false')
    for (const directory of projectDirectories(cwd))
      for (const name of ['opencode.json', 'opencode.jsonc']) files.push(join(directory, name));
  const urls = new Map<string, string>();
  const take = (config: Json): void => {
    const providers = config['provider'];
    if (!isObject(providers)) return;
    for (const [id, provider] of Object.entries(providers)) {
      const options = isObject(provider) ? provider['options'] : undefined;
      const url = isObject(options) ? options['baseURL'] : undefined;
      if (typeof url === 'string' && url !== '')
        urls.set(
          id,
          url.replace(/\{env:([^}]+)\}/g, (_, name: string) => env[name] ?? ''),
        );
    }
  };
  for (const file of files) {
    if (!existsSync(file)) continue;
    const stat = statSync(file);
    if (!stat.isFile() || stat.size > MAX_CONFIG_BYTES)
      throw new UnstuckError('USAGE', `${file}: not an OpenCode config file`);
    take(parseJsonc(readFileSync(file, 'utf8'), file));
  }
  const inline = env['OPENCODE_CONFIG_CONTENT'];
  if (inline !== undefined && inline !== '') take(parseJsonc(inline, 'OPENCODE_CONFIG_CONTENT'));
  return urls;
}

/**
 * `OPENCODE_CONFIG_CONTENT` for the run: the user's own (when set) with each pointed provider's
 * `options.baseURL` set to its proxy URL. OpenCode merges this layer last, deeply, over its config
 * files, so the rest of each provider's config (its key, models, headers) stays the user's.
 */
export function opencodeInlineConfig(existing: string | undefined, pointed: ReadonlyMap<string, string>): string {
  const config = existing === undefined || existing === '' ? {} : parseJsonc(existing, 'OPENCODE_CONFIG_CONTENT');
  const providers: Json = isObject(config['provider']) ? { ...config['provider'] } : {};
  for (const [id, url] of pointed) {
    const provider: Json = isObject(providers[id]) ? { ...(providers[id] as Json) } : {};
    const options: Json = isObject(provider['options']) ? { ...(provider['options'] as Json) } : {};
    options['baseURL'] = url;
    provider['options'] = options;
    providers[id] = provider;
  }
  return JSON.stringify({ ...config, provider: providers });
}

/** From the repository root (the nearest directory up from cwd holding `.git`, else cwd alone) down to cwd. */
function projectDirectories(cwd: string): string[] {
  const chain: string[] = [];
  for (let directory = cwd; ; directory = dirname(directory)) {
    chain.unshift(directory);
    if (existsSync(join(directory, '.git'))) return chain;
    if (dirname(directory) === directory) return [cwd];
  }
}

/** JSON with `//` and `/* *\/` comments and trailing commas, as OpenCode reads its config (jsonc-parser). */
export function parseJsonc(text: string, where: string): Json {
  let out = '';
  let index = 0;
  while (index < text.length) {
    const char = text[index] as string;
    if (char === '"') {
      const end = stringEnd(text, index);
      out += text.slice(index, end);
      index = end;
    } else if (char === '/' && text[index + 1] === '/') {
      while (index < text.length && text[index] !== '\n') index += 1;
    } else if (char === '/' && text[index + 1] === '*') {
      const end = text.indexOf('*/', index + 2);
      index = end === -1 ? text.length : end + 2;
      out += ' ';
    } else {
      out += char;
      index += 1;
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(withoutTrailingCommas(out));
  } catch (error) {
    throw new UnstuckError('USAGE', `${where}: not OpenCode config JSON (${(error as Error).message})`);
  }
  if (!isObject(value)) throw new UnstuckError('USAGE', `${where}: OpenCode config must be a JSON object`);
  return value;
}

/** The text without a comma that only whitespace separates from the `}` or `]` after it (strings kept as they are). */
function withoutTrailingCommas(text: string): string {
  let out = '';
  let index = 0;
  while (index < text.length) {
    const char = text[index] as string;
    if (char === '"') {
      const end = stringEnd(text, index);
      out += text.slice(index, end);
      index = end;
      continue;
    }
    if (char === ',') {
      let next = index + 1;
      while (next < text.length && /\s/.test(text[next] as string)) next += 1;
      if (text[next] === '}' || text[next] === ']') {
        index += 1;
        continue;
      }
    }
    out += char;
    index += 1;
  }
  return out;
}

/** The index just past the string literal that starts at `start` (a `"`). */
function stringEnd(text: string, start: number): number {
  let index = start + 1;
  while (index < text.length) {
    if (text[index] === '\\') index += 2;
    else if (text[index] === '"') return index + 1;
    else index += 1;
  }
  return text.length;
}

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
