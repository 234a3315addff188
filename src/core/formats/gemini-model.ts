/**
 * What a Gemini model id says about a final model turn (CATALOGUE gemini/ends-with-assistant):
 * "Newer Gemini models (3.x after 3.1, e.g. gemini-3.7/3.8-flash) reject contents whose last turn
 * is a model turn; older ones treat it as prefill. Gemini 1.0 (2023) required the last turn to be
 * user or function response." Sources there: anomalyco/opencode#47034 (gemini-3.8-flash),
 * duolahypercho/codex-router#322, pipecat-ai/pipecat#5821 (pipecat keeps prefill for model ids
 * matching gemini-2., gemini-3-, gemini-3.1-, gemini-pro-latest), crewAIInc/crewAI#6985,
 * songquanpeng/one-api#836 and babaohuang/GeminiProChat#68 (Gemini 1.0's text).
 *
 * 'prefill' when the model continues a final model turn, 'rejects-new' / 'rejects-1.0' when it
 * refuses one (with that generation's text), undefined for an id this does not read (a tuned
 * model, an alias): then the rule is not checked, rather than checked against a guess.
 */
export type GeminiFinalTurn = 'prefill' | 'rejects-new' | 'rejects-1.0';

const VERSIONED = /(?:^|\/)gemini-(\d+)(?:\.(\d+))?(?=$|[-@:])/;

export function geminiFinalTurn(model: string | undefined): GeminiFinalTurn | undefined {
  if (model === undefined) return undefined;
  const id = model.toLowerCase();
  if (/(?:^|\/)gemini-(?:pro|flash|flash-lite)-latest$/.test(id)) return 'prefill';
  if (/(?:^|\/)gemini-pro(?:-vision)?$/.test(id)) return 'rejects-1.0'; // gemini-pro was Gemini 1.0 Pro
  const match = VERSIONED.exec(id);
  if (match === null) return undefined;
  const major = Number(match[1]);
  const minor = Number(match[2] ?? 0);
  if (major === 1) return minor === 0 ? 'rejects-1.0' : 'prefill';
  if (major === 2) return 'prefill';
  if (major === 3) return minor <= 1 ? 'prefill' : 'rejects-new';
  return major > 3 ? 'rejects-new' : undefined;
}

export const GEMINI_FINAL_TURN_TEXT = {
  'rejects-new': 'Requests ending with a model turn are not supported.',
  'rejects-1.0': 'Please ensure that multiturn requests ends with a user role or a function response.',
} as const;
