/**
 * The work the proxy does on one request body, alone, for bench/http-callgrind.ts (`--work`): the
 * bench's small body of a wire decoded from bytes and parsed (`parse`), or decoded, parsed and
 * repaired as the proxy does it, `wire.sanitize` (`sanitize`), RUNS times after 2000 warm-up runs. Run at
 * two RUNS under callgrind, the difference per run is that step's instructions, start-up excluded.
 *
 *   node bench/http-wire-work.ts WIRE parse|sanitize RUNS
 */
import { WIRES } from '../src/http/wires/wire-table.js';
import { anthropicBody, geminiBody, responsesBody, smallBody } from './http-fixtures.js';

const [name, step, given] = process.argv.slice(2);
const runs = Number(given);
const bodies: Record<string, string> = {
  chat: smallBody(),
  anthropic: anthropicBody({ turns: 5 }),
  responses: responsesBody({ turns: 5 }),
  gemini: geminiBody({ turns: 5 }),
};
const wire = WIRES.find((candidate) => candidate.name === name);
const text = name === undefined ? undefined : bodies[name];
if (
  wire === undefined ||
  text === undefined ||
  (step !== 'parse' && step !== 'sanitize') ||
  !Number.isSafeInteger(runs)
) {
  console.error('usage: http-wire-work.ts chat|anthropic|responses|gemini parse|sanitize RUNS');
  process.exit(2);
}
const bytes = new TextEncoder().encode(text);
const decoder = new TextDecoder();
// The proxy's own settings for the chat wire (`unstuck proxy --profile deepseek` in the benches).
const settings = { profile: 'deepseek' as const };
let changed = 0;
const once = (): void => {
  const body = wire.parse(decoder.decode(bytes));
  if (body === undefined) throw new Error(`${name}: the bench body is not of its wire's shape`);
  if (step === 'sanitize' && wire.sanitize(body, settings).changed) changed += 1;
};
for (let index = 0; index < 2000 + runs; index += 1) once(); // 2000 warm-up runs: the JIT tiers up before the counted ones
if (changed > 0) throw new Error(`${name}: the bench body was repaired; it is meant to be valid`);
