import { anthropicMessagesWire } from './anthropic-messages-wire.js';
import { chatCompletionsWire } from './chat-completions-wire.js';
import type { HttpWire, NativeWireName, WireName } from './http-wire.js';

/** The wires besides chat completions: the sanitizing fetch tries these first (chat keeps its own path there). */
export const NATIVE_WIRES: readonly HttpWire<NativeWireName>[] = [anthropicMessagesWire];

/** Every wire the proxy repairs, in the order their paths are tried. */
export const WIRES: readonly HttpWire[] = [chatCompletionsWire, ...NATIVE_WIRES];

export const WIRE_NAMES: readonly WireName[] = WIRES.map((wire) => wire.name);

/** The wire a pathname belongs to, whatever the method (the proxy repairs only a POST). */
export function wireOfPath(pathname: string): HttpWire | undefined {
  for (const wire of WIRES) if (wire.matchesPath(pathname)) return wire;
  return undefined;
}

export function isWireName(name: string): name is WireName {
  return (WIRE_NAMES as readonly string[]).includes(name);
}
