/** The wire formats `check`, `repair` and `trim` read; OpenAI chat is the default. */
export type FormatName = 'openai-chat' | 'anthropic-messages' | 'gemini-contents' | 'responses-input';

/** The formats besides OpenAI chat: each read on its own form, with its own rules (src/core/formats/). */
export type NativeFormatName = Exclude<FormatName, 'openai-chat'>;

export const formatNames: readonly FormatName[] = [
  'openai-chat',
  'anthropic-messages',
  'gemini-contents',
  'responses-input',
];

export function isFormatName(name: string): name is FormatName {
  return (formatNames as readonly string[]).includes(name);
}

/** What a converter returns: the OpenAI-chat form, and for each converted message the index of the native element it came from. */
export interface Converted<M> {
  messages: M[];
  origins: number[];
}
