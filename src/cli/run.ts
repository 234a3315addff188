import { parseArgs } from 'node:util';
import type { Command } from './command.js';
import { EXIT } from './command.js';
import { commands } from './commands.js';
import { describeFailure } from './describe-failure.js';
import type { Io } from './io.js';

const VERSION = '0.1.0';

export function formatUsage(command: Command): string {
  const lines = [`Usage: unstuck ${command.name} [options] ${command.positionals}`.trimEnd(), '', command.summary, ''];
  const names = Object.keys(command.options);
  if (names.length > 0) lines.push('Options:');
  for (const name of names) {
    const option = command.options[name];
    if (option === undefined) continue;
    const flag = `${option.short === undefined ? '    ' : `-${option.short}, `}--${name}${option.type === 'string' ? ' VALUE' : ''}`;
    lines.push(`  ${flag.padEnd(26)} ${command.optionHelp[name] ?? ''}`);
  }
  lines.push(`  ${'-h, --help'.padEnd(26)} Show this help`);
  return `${lines.join('\n')}\n`;
}

export function formatHelp(): string {
  const lines = [
    `unstuck ${VERSION}: keep tool-calling LLM histories valid`,
    '',
    'Usage: unstuck <command> [options]',
    '',
    'Commands:',
  ];
  for (const [name, entry] of Object.entries(commands)) lines.push(`  ${name.padEnd(10)} ${entry.summary}`);
  lines.push('', "Run `unstuck <command> --help` for a command's options.");
  return `${lines.join('\n')}\n`;
}

/** Runs one CLI invocation. Never throws: every failure becomes one line on stderr and an exit code. */
export async function run(argv: readonly string[], io: Io): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '-h' || name === '--help' || name === 'help') {
    io.stdout.write(formatHelp());
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  if (name === '--version' || name === '-v') {
    io.stdout.write(`${VERSION}\n`);
    return EXIT.ok;
  }
  const entry = commands[name];
  if (entry === undefined) {
    io.stderr.write(`unstuck: unknown command '${name}' (try: ${Object.keys(commands).join(', ')})\n`);
    return EXIT.usage;
  }
  const command = await entry.load();
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: command.passesCommandLine === true ? endOptionsAtCommand(rest, command) : [...rest],
      options: { ...command.options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    // parseArgs explains some errors over several lines; the first one says what is wrong.
    io.stderr.write(`unstuck ${name}: ${(error as Error).message.split('\n')[0]} (see unstuck ${name} --help)\n`);
    return EXIT.usage;
  }
  if (parsed.values.help === true) {
    io.stdout.write(formatUsage(command));
    return EXIT.ok;
  }
  try {
    return await command.run(
      { values: parsed.values as Parameters<Command['run']>[0]['values'], positionals: parsed.positionals },
      io,
    );
  } catch (error) {
    io.stderr.write(`${describeFailure(name, error)}\n`);
    return EXIT.usage;
  }
}

/**
 * Puts `--` before the first positional, so that the options of the command line after it stay
 * that command's (`unstuck run claude --resume ID`). An option that takes a value takes the next
 * argument unless it is written `--name=value`.
 */
function endOptionsAtCommand(args: readonly string[], command: Command): string[] {
  const takesValue = new Set<string>();
  for (const [name, option] of Object.entries(command.options)) {
    if (option.type !== 'string') continue;
    takesValue.add(`--${name}`);
    if (option.short !== undefined) takesValue.add(`-${option.short}`);
  }
  for (let index = 0; index < args.length; index++) {
    const arg = args[index] as string;
    if (arg === '--') return [...args];
    if (!arg.startsWith('-') || arg === '-') return [...args.slice(0, index), '--', ...args.slice(index)];
    if (takesValue.has(arg)) index++;
  }
  return [...args];
}
