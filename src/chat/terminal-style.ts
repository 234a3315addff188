/** ANSI styling that switches itself off: https://no-color.org, `TERM=dumb`, or output that is not a terminal. */
export interface TerminalStyle {
  readonly enabled: boolean;
  dim(text: string): string;
  bold(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
}

export function createTerminalStyle(enabled: boolean): TerminalStyle {
  const wrap =
    (open: number, close: number) =>
    (text: string): string =>
      enabled && text !== '' ? `\x1b[${open}m${text}\x1b[${close}m` : text;
  return {
    enabled,
    dim: wrap(2, 22),
    bold: wrap(1, 22),
    red: wrap(31, 39),
    green: wrap(32, 39),
    yellow: wrap(33, 39),
    cyan: wrap(36, 39),
  };
}

/** Colour only on a terminal, and never when NO_COLOR is set to anything non-empty or TERM is dumb. */
export function colorWanted(output: { isTTY?: boolean }, env: Record<string, string | undefined>): boolean {
  if (output.isTTY !== true) return false;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  return env.TERM !== 'dumb';
}
