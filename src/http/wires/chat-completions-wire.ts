import { healChatBody } from '../heal-chat-body.js';
import { openAIError } from '../openai-error-response.js';
import type { ChatBody } from '../sanitize-chat-body.js';
import { parseChatBody, sanitizeChatBody } from '../sanitize-chat-body.js';
import type { HttpWire } from './http-wire.js';
import { pathnameOf } from './http-wire.js';

/** As isChatCompletionsPath, on a pathname already parsed. */
const CHAT_PATH = /\/chat\/completions\/?$/;

/**
 * OpenAI chat completions (and every OpenAI-compatible provider): `POST …/chat/completions`,
 * repaired with the core's chat rules for the proxy's profile; a 400 naming a pairing or ordering
 * rule gets the strongest repair and one retry (heal-chat-body.ts).
 */
export const chatCompletionsWire: HttpWire<'chat'> = {
  name: 'chat',
  matchesPath: (pathname) => CHAT_PATH.test(pathname),
  matches(url) {
    const pathname = pathnameOf(url);
    return pathname !== undefined && CHAT_PATH.test(pathname);
  },
  parse: parseChatBody,
  sanitize: (body, settings) => sanitizeChatBody(body as ChatBody, settings),
  heal: (sent, status, text, settings) => healChatBody(sent as ChatBody, status, text, settings),
  error: (status, message, code) => openAIError(status, message, code),
};
