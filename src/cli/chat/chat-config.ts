import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { UnstuckError } from '../../core/errors.js';
import type { ProfileName } from '../../core/profiles.js';
import { isProfileName, profileNames } from '../../core/profiles.js';

export const DEFAULT_BASE_URL = 'https://api.deepseek.com';
export const DEFAULT_MODEL = 'deepseek-chat';
/** Where the project's chat settings live, relative to the working directory. */
export const CONFIG_FILE = join('.unstuck', 'config.json');

export interface ChatConfig {
  baseURL: string;
  apiKey: string;
  model: string;
  profile: ProfileName;
  /** Unset: the profile's default for the model. */
  thinking?: boolean;
  systemPrompt?: string;
  contextWindow?: number;
}

/** A setting that was ignored or converted, with where it is, so the person can fix it. */
export interface ConfigWarning {
  file: string;
  line?: number;
  key?: string;
  message: string;
}

export interface ChatFlags {
  model?: string;
  baseURL?: string;
  profile?: string;
  thinking?: boolean;
}

type FileSettings = Partial<Omit<ChatConfig, 'apiKey'>>;

/**
 * The chat's settings: flags over `.unstuck/config.json` over defaults; the key only from the
 * environment. A bad or stale value in the file never stops the start: it is reported with its
 * file, line and key, and the default is used instead. A missing key is the one hard failure.
 */
export async function loadChatConfig(input: { flags: ChatFlags; env: Record<string, string | undefined>; cwd: string }): Promise<{ config: ChatConfig; warnings: ConfigWarning[] }> {
  const { flags, env, cwd } = input;
  const { settings, warnings } = await readConfigFile(cwd);
  if (flags.baseURL !== undefined && !isHttpURL(flags.baseURL)) throw new UnstuckError('USAGE', `--base-url must be an http(s) URL, got '${flags.baseURL}'`);
  if (flags.profile !== undefined && !isProfileName(flags.profile)) throw new UnstuckError('USAGE', `unknown --profile '${flags.profile}' (one of: ${profileNames.join(', ')})`);

  const customBase = flags.baseURL ?? settings.baseURL;
  const baseURL = (customBase ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
  // With the DeepSeek default only its key makes sense; with another endpoint an OpenAI-style key comes first.
  const apiKey = nonEmpty(customBase === undefined ? env.DEEPSEEK_API_KEY : (env.OPENAI_API_KEY ?? env.DEEPSEEK_API_KEY));
  if (apiKey === undefined) {
    throw new UnstuckError('CONFIG', customBase === undefined
      ? 'no API key: set DEEPSEEK_API_KEY (or OPENAI_API_KEY together with --base-url)'
      : `no API key for ${baseURL}: set OPENAI_API_KEY (or DEEPSEEK_API_KEY)`);
  }
  const config: ChatConfig = {
    baseURL,
    apiKey,
    model: flags.model ?? settings.model ?? DEFAULT_MODEL,
    profile: (flags.profile as ProfileName | undefined) ?? settings.profile ?? profileForURL(baseURL),
  };
  const thinking = flags.thinking ?? settings.thinking;
  if (thinking !== undefined) config.thinking = thinking;
  if (settings.systemPrompt !== undefined) config.systemPrompt = settings.systemPrompt;
  if (settings.contextWindow !== undefined) config.contextWindow = settings.contextWindow;
  return { config, warnings };
}

/** The provider profile a base URL most likely speaks; `openai` when nothing in the host says otherwise. */
export function profileForURL(url: string): ProfileName {
  let host = '';
  try {
    host = new URL(url).hostname;
  } catch {
    return 'openai';
  }
  if (host.includes('deepseek')) return 'deepseek';
  if (host.includes('mistral')) return 'mistral';
  if (host.includes('moonshot')) return 'moonshot';
  if (host.includes('groq')) return 'groq';
  if (host.includes('dashscope') || host.includes('qwen')) return 'qwen';
  return 'openai';
}

export function formatConfigWarning(warning: ConfigWarning): string {
  const place = warning.line === undefined ? warning.file : `${warning.file}:${warning.line}`;
  return `${place}: ${warning.key === undefined ? '' : `${warning.key}: `}${warning.message}`;
}

/** Keys an older config may still carry, and what became of them. */
const RENAMED: Record<string, keyof FileSettings> = { baseUrl: 'baseURL', base_url: 'baseURL', system_prompt: 'systemPrompt', context_window: 'contextWindow' };

async function readConfigFile(cwd: string): Promise<{ settings: FileSettings; warnings: ConfigWarning[] }> {
  const file = CONFIG_FILE;
  const warnings: ConfigWarning[] = [];
  const settings: FileSettings = {};
  let text: string;
  try {
    text = await readFile(join(cwd, file), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') warnings.push({ file, message: `cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}), ignored` });
    return { settings, warnings };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    warnings.push({ file, message: `is not valid JSON (${(error as Error).message}), the whole file is ignored` });
    return { settings, warnings };
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    warnings.push({ file, message: 'must hold a JSON object, the whole file is ignored' });
    return { settings, warnings };
  }
  const warn = (key: string, message: string): void => {
    const line = lineOfKey(text, key);
    warnings.push(line === undefined ? { file, key, message } : { file, line, key, message });
  };
  for (const [rawKey, value] of Object.entries(parsed as Record<string, unknown>)) {
    let key = rawKey;
    const renamed = RENAMED[rawKey];
    if (renamed !== undefined) {
      warn(rawKey, `renamed to "${renamed}"; the value is used, please rename it`);
      key = renamed;
    }
    switch (key) {
      case '$schema':
        break;
      case 'model':
      case 'systemPrompt':
        if (typeof value === 'string' && value.trim() !== '') settings[key] = value;
        else warn(rawKey, 'must be a non-empty string, ignored');
        break;
      case 'baseURL':
        if (typeof value === 'string' && isHttpURL(value)) settings.baseURL = value;
        else warn(rawKey, `must be an http(s) URL, ignored (using ${DEFAULT_BASE_URL})`);
        break;
      case 'profile':
        if (typeof value === 'string' && isProfileName(value)) settings.profile = value;
        else warn(rawKey, `unknown profile ${JSON.stringify(value)}, ignored (one of: ${profileNames.join(', ')})`);
        break;
      case 'thinking':
        if (typeof value === 'boolean') settings.thinking = value;
        else warn(rawKey, 'must be true or false, ignored');
        break;
      case 'contextWindow':
        if (typeof value === 'number' && Number.isInteger(value) && value > 0) settings.contextWindow = value;
        else warn(rawKey, 'must be a positive integer (tokens), ignored');
        break;
      case 'apiKey':
      case 'api_key':
        warn(rawKey, 'keys are not read from the config file (use DEEPSEEK_API_KEY or OPENAI_API_KEY), ignored');
        break;
      case 'provider':
        warn(rawKey, 'no longer used: set "baseURL" and, if needed, "profile"; ignored');
        break;
      default:
        warn(rawKey, 'unknown setting, ignored');
    }
  }
  return { settings, warnings };
}

function lineOfKey(text: string, key: string): number | undefined {
  const at = text.indexOf(`${JSON.stringify(key)}`);
  return at === -1 ? undefined : text.slice(0, at).split('\n').length;
}

function isHttpURL(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}
