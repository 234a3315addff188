import type { ParseArgsConfig } from 'node:util';
import type { Io } from './io.js';

/** A command is data: its help text is generated from this definition (see help.ts). */
export interface Command {
  name: string;
  summary: string;
  /** Positional arguments as shown in the usage line, e.g. `FILE...`. */
  positionals: string;
  options: NonNullable<ParseArgsConfig['options']>;
  /** One line per option, keyed by option name. */
  optionHelp: Record<string, string>;
  /**
   * Everything from the first positional on is another program's command line, passed as it is
   * (`unstuck run claude --resume ID`, as `env` and `nice` do): options are read only before it.
   */
  passesCommandLine?: boolean;
  run(
    input: { values: Record<string, string | boolean | string[] | boolean[] | undefined>; positionals: string[] },
    io: Io,
  ): Promise<number>;
}

/** Exit codes shared by every command. */
export const EXIT = { ok: 0, violations: 1, usage: 2 } as const;
