import { UnstuckError } from '../core/errors.js';
import { type FormatName, formatNames, isFormatName } from '../core/formats/format-types.js';
import { isProfileName, type ProfileName, profileNames } from '../core/profiles.js';
import type { Command } from './command.js';

/** The options check and fix share: which provider's rules, and the request facts rules depend on. */
export const historyOptions: Command['options'] = {
  profile: { type: 'string', short: 'p' },
  json: { type: 'boolean' },
  request: { type: 'boolean' },
  model: { type: 'string' },
  thinking: { type: 'string' },
  format: { type: 'string' },
};

export const historyOptionHelp: Record<string, string> = {
  profile: `Provider rules to apply: ${profileNames.join(', ')} (default openai)`,
  json: 'Machine-readable output',
  request: 'Treat each file as a request about to be sent (adds rules about how a request ends)',
  model: 'The model the history is sent to (some rules depend on it, e.g. deepseek-reasoner)',
  thinking: 'Thinking mode on or off (default: what the profile assumes for the model)',
  format: `Read a JSON document's history as this wire format (${formatNames.join(', ')}; default: recognised from its elements, else refused)`,
};

export interface HistoryFlags {
  profile: ProfileName;
  scope: 'history' | 'request';
  model?: string;
  thinking?: boolean;
}

export function readHistoryFlags(values: Record<string, unknown>): HistoryFlags {
  const profile = typeof values['profile'] === 'string' ? values['profile'] : 'openai';
  if (!isProfileName(profile))
    throw new UnstuckError('USAGE', `unknown profile '${profile}' (known: ${profileNames.join(', ')})`);
  const flags: HistoryFlags = { profile, scope: values['request'] === true ? 'request' : 'history' };
  if (typeof values['model'] === 'string') flags.model = values['model'];
  const thinking = values['thinking'];
  if (thinking !== undefined) {
    if (thinking !== 'on' && thinking !== 'off')
      throw new UnstuckError('USAGE', `--thinking takes 'on' or 'off', not '${String(thinking)}'`);
    flags.thinking = thinking === 'on';
  }
  return flags;
}

/** --format: the wire a JSON document is read as, instead of the one its elements show (or a refusal). */
export function readFormatFlag(values: Record<string, unknown>): { format?: FormatName } {
  const format = values['format'];
  if (format === undefined) return {};
  if (typeof format !== 'string' || !isFormatName(format))
    throw new UnstuckError('USAGE', `--format takes ${formatNames.join(', ')}, not '${String(format)}'`);
  return { format };
}
