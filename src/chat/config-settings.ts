import type { ProfileName } from '../core/profiles.js';
import { isProfileName, profileNames } from '../core/profiles.js';

/** What a config file may set. Keys never come from a file (a config file gets committed). */
export interface ConfigSettings {
  baseURL?: string;
  model?: string;
  profile?: ProfileName;
  thinking?: boolean;
  systemPrompt?: string;
  contextWindow?: number;
}

export type SettingName = keyof ConfigSettings;

/**
 * The settings that decide where the API key and the conversation go (`baseURL`; `model`, which on
 * a router picks the upstream; `profile`, the provider rules) or what the model is told
 * (`systemPrompt`). A project file sets these only once the user has trusted it; `thinking` and
 * `contextWindow` change cost and how much history is sent, nothing about where it goes.
 * See docs/decisions/chat-project-trust.md.
 */
export const SENSITIVE_SETTINGS: readonly SettingName[] = ['baseURL', 'model', 'profile', 'systemPrompt'];

/** A setting that was ignored or converted, with where it is, so the person can fix it. */
export interface ConfigWarning {
  file: string;
  line?: number;
  key?: string;
  message: string;
}

/** Keys an older config may still carry, and what became of them. */
const RENAMED: Record<string, SettingName> = {
  baseUrl: 'baseURL',
  base_url: 'baseURL',
  system_prompt: 'systemPrompt',
  context_window: 'contextWindow',
};

/**
 * Reads the settings of one config file's text. Never throws: a bad value, an unknown key or a file
 * that is not JSON is a warning naming the file, line and key, and the setting is left out.
 */
export function parseConfigSettings(
  text: string,
  file: string,
  defaults: { baseURL: string },
): { settings: ConfigSettings; warnings: ConfigWarning[] } {
  const warnings: ConfigWarning[] = [];
  const settings: ConfigSettings = {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.startsWith('\uFEFF') ? text.slice(1) : text);
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
        else warn(rawKey, `must be an http(s) URL, ignored (using ${defaults.baseURL})`);
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

export function formatConfigWarning(warning: ConfigWarning): string {
  const place = warning.line === undefined ? warning.file : `${warning.file}:${warning.line}`;
  return `${place}: ${warning.key === undefined ? '' : `${warning.key}: `}${warning.message}`;
}

export function isHttpURL(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

function lineOfKey(text: string, key: string): number | undefined {
  const at = text.indexOf(`${JSON.stringify(key)}`);
  return at === -1 ? undefined : text.slice(0, at).split('\n').length;
}
