/**
 * What `run_command` passes on of the chat's environment: what a shell and ordinary build tools
 * need to find programs, the home, the locale and the terminal, nothing else. A command's output
 * goes to the model and into the transcript, so a token it can `env` out of its environment is a
 * token sent to the provider and saved on disk.
 */
export const COMMAND_ENVIRONMENT = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'LANGUAGE',
  'TERM',
  'COLORTERM',
  'NO_COLOR',
  'TMPDIR',
  'TMP',
  'TEMP',
  'TZ',
  'EDITOR',
  'VISUAL',
  'PAGER',
  // Windows' own: programs fail without them.
  'SYSTEMROOT',
  'SystemRoot',
  'COMSPEC',
  'PATHEXT',
  'WINDIR',
  'USERPROFILE',
  'APPDATA',
  'LOCALAPPDATA',
] as const;

/**
 * Set in every command's environment: an `unstuck chat` started by a command the model runs
 * refuses `--trust-project` (a model must not trust its own config). A command can unset it; a
 * confirmed command can do anything the user can, so this stops the plain attempt, not every one.
 */
export const CHAT_COMMAND_MARKER = 'UNSTUCK_CHAT_COMMAND';

/** `LC_ALL`, `LC_CTYPE` and the other locale categories. */
const LOCALE = /^LC_[A-Z]+$/;

/**
 * Names that hold secrets by convention: `*_TOKEN`, `*_KEY`, `*_SECRET`, `*PASSWORD*`, `*_AUTH*`,
 * credentials, cookies, sessions, private keys. Removed even when asked for by name.
 */
const SECRET =
  /(TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE|COOKIE|SESSION|(^|_)(API_?KEY|KEY|PASS|PWD|AUTH[A-Z]*|PAT|DSN)(_|$)|KEY$)/i;

export function isSecretName(name: string): boolean {
  // PWD is the working directory, not a password.
  return name !== 'PWD' && name !== 'OLDPWD' && SECRET.test(name);
}

/**
 * The environment of a command: COMMAND_ENVIRONMENT, the LC_* variables, and the names the user
 * lists in UNSTUCK_COMMAND_ENV (comma- or space-separated, from the user's own environment); any
 * name that looks like a secret is left out whatever the list says.
 */
export function commandEnvironment(env: Record<string, string | undefined>): Record<string, string> {
  const wanted = new Set<string>(COMMAND_ENVIRONMENT);
  for (const name of (env.UNSTUCK_COMMAND_ENV ?? '').split(/[\s,]+/)) if (name !== '') wanted.add(name);
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || isSecretName(name)) continue;
    if (wanted.has(name) || LOCALE.test(name)) result[name] = value;
  }
  result[CHAT_COMMAND_MARKER] = '1';
  return result;
}

/**
 * What the chat takes out of its own initial environment block (/proc/PID/environ, which a command
 * can read as /proc/$PPID/environ whatever its own environment is): `remove`, the provider keys and
 * every secret-looking name, unset for good; `hide`, every other name a command would not get,
 * kept in the chat's environment but not in that block (a DATABASE_URL with a password in it).
 */
export function namesToErase(
  env: Record<string, string | undefined>,
  providerKeys: readonly string[],
): { remove: string[]; hide: string[] } {
  const passed = new Set(Object.keys(commandEnvironment(env)));
  const remove: string[] = [];
  const hide: string[] = [];
  for (const name of Object.keys(env)) {
    if (providerKeys.includes(name) || isSecretName(name)) remove.push(name);
    else if (!passed.has(name)) hide.push(name);
  }
  return { remove, hide };
}
