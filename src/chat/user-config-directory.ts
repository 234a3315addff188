import { join } from 'node:path';

/**
 * Where the user's own chat settings and trust decisions live, by each platform's convention:
 * `$XDG_CONFIG_HOME/unstuck` wherever it is set, else `~/.config/unstuck` (Linux and other Unixes,
 * XDG Base Directory spec), `~/Library/Application Support/unstuck` (macOS), `%APPDATA%\unstuck`
 * (Windows). Read from the environment passed in, never from a project; undefined when the
 * environment names no home at all (then nothing can be remembered).
 */
export function userConfigDirectory(
  env: Record<string, string | undefined>,
  platform: NodeJS.Platform = process.platform,
): string | undefined {
  const xdg = absolute(env.XDG_CONFIG_HOME, platform);
  if (xdg !== undefined) return join(xdg, 'unstuck');
  if (platform === 'win32') {
    const appData =
      absolute(env.APPDATA, platform) ??
      (absolute(env.USERPROFILE, platform) === undefined
        ? undefined
        : join(env.USERPROFILE as string, 'AppData', 'Roaming'));
    return appData === undefined ? undefined : join(appData, 'unstuck');
  }
  const home = absolute(env.HOME, platform);
  if (home === undefined) return undefined;
  return platform === 'darwin'
    ? join(home, 'Library', 'Application Support', 'unstuck')
    : join(home, '.config', 'unstuck');
}

/** The XDG spec: a relative value is invalid and must be ignored. */
function absolute(value: string | undefined, platform: NodeJS.Platform): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (platform === 'win32') return /^([A-Za-z]:[\\/]|\\\\)/.test(value) ? value : undefined;
  return value.startsWith('/') ? value : undefined;
}
