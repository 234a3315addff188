import { realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { UnstuckError } from '../core/errors.js';
import type { ProfileName } from '../core/profiles.js';
import { isProfileName, profileNames } from '../core/profiles.js';
import type { ConfigSettings, ConfigWarning, SettingName } from './config-settings.js';
import { isHttpURL, parseConfigSettings, SENSITIVE_SETTINGS } from './config-settings.js';
import type { ProjectTrust } from './project-trust.js';
import { createProjectTrust, sha256Of } from './project-trust.js';
import { readSmallFile } from './read-small-file.js';
import { userConfigDirectory } from './user-config-directory.js';

export type { ConfigWarning } from './config-settings.js';
export { formatConfigWarning } from './config-settings.js';

export const DEFAULT_BASE_URL = 'https://api.deepseek.com';
export const DEFAULT_MODEL = 'deepseek-chat';
/** Where the project's chat settings live, relative to the working directory. */
export const CONFIG_FILE = join('.unstuck', 'config.json');
/** The user's own settings, in `userConfigDirectory()`. */
export const USER_CONFIG_FILE = 'config.json';

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

export interface ChatFlags {
  model?: string;
  baseURL?: string;
  profile?: string;
  thinking?: boolean;
}

/** What an untrusted project file would set, shown to the person before they trust it. */
export interface TrustQuestion {
  /** As shown: `.unstuck/config.json`. */
  file: string;
  /** Its real path, under which the decision is kept. */
  path: string;
  sha256: string;
  sets: { key: SettingName; value: string | number | boolean }[];
}

/**
 * How a project file's sensitive settings are treated: `ask` the person once per content (the
 * interactive chat), `never` take them from an untrusted file (one-shot, scripts), or `grant`
 * trust to the file as it is now (`--trust-project`).
 */
export type TrustMode =
  | { mode: 'never' }
  | { mode: 'grant' }
  | { mode: 'ask'; ask(question: TrustQuestion): Promise<boolean> };

/**
 * The chat's settings, lowest first: defaults < the user's own config < the project's
 * `.unstuck/config.json` < UNSTUCK_* variables < flags. The project file's settings that decide
 * where the key goes or what the model is told (SENSITIVE_SETTINGS) count only once the user has
 * trusted that file at that content; otherwise they are left out and `notes` says so in one line.
 * The key comes only from the environment. A bad value in a file never stops the start (a
 * warning names file, line and key); a missing key is the one hard failure.
 */
export async function loadChatConfig(input: {
  flags: ChatFlags;
  env: Record<string, string | undefined>;
  cwd: string;
  trust?: TrustMode;
  platform?: NodeJS.Platform;
}): Promise<{ config: ChatConfig; warnings: ConfigWarning[]; notes: string[] }> {
  const { flags, env, cwd } = input;
  const trustMode = input.trust ?? { mode: 'never' };
  if (flags.baseURL !== undefined && !isHttpURL(flags.baseURL))
    throw new UnstuckError('USAGE', `--base-url must be an http(s) URL, got '${flags.baseURL}'`);
  if (flags.profile !== undefined && !isProfileName(flags.profile))
    throw new UnstuckError('USAGE', `unknown --profile '${flags.profile}' (one of: ${profileNames.join(', ')})`);
  const fromEnv = environmentSettings(env);

  const directory = userConfigDirectory(env, input.platform);
  const warnings: ConfigWarning[] = [];
  const notes: string[] = [];
  const user =
    directory === undefined
      ? {}
      : await readSettings(join(directory, USER_CONFIG_FILE), join(directory, USER_CONFIG_FILE), warnings);
  const project = await readProject(cwd, createProjectTrust(directory), trustMode, warnings, notes);

  const customBase = flags.baseURL ?? fromEnv.baseURL ?? project.baseURL ?? user.baseURL;
  const baseURL = (customBase ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
  // With the DeepSeek default only its key makes sense; with another endpoint an OpenAI-style key comes first.
  const apiKey = nonEmpty(
    customBase === undefined ? env.DEEPSEEK_API_KEY : (env.OPENAI_API_KEY ?? env.DEEPSEEK_API_KEY),
  );
  if (apiKey === undefined) {
    throw new UnstuckError(
      'CONFIG',
      customBase === undefined
        ? 'no API key: set DEEPSEEK_API_KEY (or OPENAI_API_KEY together with --base-url)'
        : `no API key for ${baseURL}: set OPENAI_API_KEY (or DEEPSEEK_API_KEY)`,
    );
  }
  const pick = <K extends SettingName>(key: K): ConfigSettings[K] =>
    (fromEnv[key] ?? project[key] ?? user[key]) as ConfigSettings[K];
  const config: ChatConfig = {
    baseURL,
    apiKey,
    model: flags.model ?? pick('model') ?? DEFAULT_MODEL,
    profile: (flags.profile as ProfileName | undefined) ?? pick('profile') ?? profileForURL(baseURL),
  };
  const thinking = flags.thinking ?? pick('thinking');
  if (thinking !== undefined) config.thinking = thinking;
  const systemPrompt = pick('systemPrompt');
  if (systemPrompt !== undefined) config.systemPrompt = systemPrompt;
  const contextWindow = pick('contextWindow');
  if (contextWindow !== undefined) config.contextWindow = contextWindow;
  return { config, warnings, notes };
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

/** UNSTUCK_BASE_URL, UNSTUCK_MODEL, UNSTUCK_PROFILE: the user's environment, checked like flags. */
function environmentSettings(env: Record<string, string | undefined>): ConfigSettings {
  const settings: ConfigSettings = {};
  const baseURL = nonEmpty(env.UNSTUCK_BASE_URL);
  if (baseURL !== undefined) {
    if (!isHttpURL(baseURL))
      throw new UnstuckError('CONFIG', `UNSTUCK_BASE_URL must be an http(s) URL, got '${baseURL}'`);
    settings.baseURL = baseURL;
  }
  const model = nonEmpty(env.UNSTUCK_MODEL);
  if (model !== undefined) settings.model = model;
  const profile = nonEmpty(env.UNSTUCK_PROFILE);
  if (profile !== undefined) {
    if (!isProfileName(profile))
      throw new UnstuckError('CONFIG', `unknown UNSTUCK_PROFILE '${profile}' (one of: ${profileNames.join(', ')})`);
    settings.profile = profile;
  }
  return settings;
}

async function readSettings(path: string, shown: string, warnings: ConfigWarning[]): Promise<ConfigSettings> {
  const read = await readSmallFile(path);
  if (read.kind === 'missing') return {};
  if (read.kind === 'unreadable') {
    warnings.push({ file: shown, message: `cannot be read (${read.reason}), ignored` });
    return {};
  }
  const parsed = parseConfigSettings(read.text, shown, { baseURL: DEFAULT_BASE_URL });
  warnings.push(...parsed.warnings);
  return parsed.settings;
}

async function readProject(
  cwd: string,
  trust: ProjectTrust,
  trustMode: TrustMode,
  warnings: ConfigWarning[],
  notes: string[],
): Promise<ConfigSettings> {
  const file = CONFIG_FILE;
  let path: string;
  try {
    // The real path: trust is kept for the file itself, wherever a link points.
    path = await realpath(join(cwd, file));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR')
      warnings.push({ file, message: `cannot be read (${code ?? 'error'}), ignored` });
    if (trustMode.mode === 'grant') notes.push(`no ${file} here to trust`);
    return {};
  }
  const read = await readSmallFile(path);
  if (read.kind !== 'text') {
    if (read.kind === 'unreadable') warnings.push({ file, message: `cannot be read (${read.reason}), ignored` });
    return {};
  }
  const parsed = parseConfigSettings(read.text, file, { baseURL: DEFAULT_BASE_URL });
  warnings.push(...parsed.warnings);
  const settings = parsed.settings;
  const sensitive = SENSITIVE_SETTINGS.filter((key) => settings[key] !== undefined);
  if (sensitive.length === 0) return settings;

  const sha256 = sha256Of(read.bytes);
  if (await trust.isTrusted(path, sha256)) return settings;
  const question: TrustQuestion = {
    file,
    path,
    sha256,
    sets: sensitive.map((key) => ({ key, value: settings[key] as string })),
  };
  let granted = false;
  if (trustMode.mode === 'grant') granted = true;
  else if (trustMode.mode === 'ask') granted = await trustMode.ask(question);
  if (granted) {
    try {
      await trust.trust(path, sha256);
      notes.push(`trusted ${file} as it is now (sha256 ${sha256.slice(0, 12)}); any change to it asks again`);
    } catch (error) {
      notes.push(`trusted ${file} for this run only: ${(error as Error).message}`);
    }
    return settings;
  }
  for (const key of sensitive) delete settings[key];
  notes.push(
    `${file} sets ${sensitive.join(', ')} but is not trusted: ignored (review it, then run 'unstuck chat --trust-project' to trust it as it is)`,
  );
  return settings;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}
