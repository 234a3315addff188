/**
 * What a Claude model id says about the rules that differ by model. A model id the patterns do
 * not read (a gateway alias, a fine-tune, a typo) decides nothing: the rules that depend on the
 * model are then not checked, rather than checked against a guess.
 */
export interface ClaudeModel {
  family: 'opus' | 'sonnet' | 'haiku' | 'other';
  /** major * 10 + minor: claude-sonnet-4-6 is 46, claude-3-7-sonnet-20250219 is 37, claude-opus-5 is 50. */
  version: number;
}

// claude-opus-4-6, claude-sonnet-4-20250514 (4.0: an 8-digit date is not a minor), claude-opus-5-5,
// Bedrock's anthropic.claude-sonnet-4-6-v1:0, Vertex's claude-sonnet-4-6@20260101.
const NEW_STYLE = /(?:^|[./:])claude-([a-z]+)-(\d{1,2})(?:-(\d{1,2}))?(?=$|[-@:.])/;
// claude-3-7-sonnet-20250219, claude-3-5-haiku-latest, claude-3-opus-20240229.
const OLD_STYLE = /(?:^|[./:])claude-(\d)(?:-(\d))?-([a-z]+)(?=$|[-@:.])/;

export function claudeModelOf(model: string | undefined): ClaudeModel | undefined {
  if (model === undefined) return undefined;
  const id = model.toLowerCase();
  const modern = NEW_STYLE.exec(id);
  if (modern !== null) return made(modern[1] as string, Number(modern[2]), Number(modern[3] ?? 0));
  const old = OLD_STYLE.exec(id);
  if (old !== null) return made(old[3] as string, Number(old[1]), Number(old[2] ?? 0));
  return undefined;
}

function made(family: string, major: number, minor: number): ClaudeModel {
  const known = family === 'opus' || family === 'sonnet' || family === 'haiku';
  return { family: known ? family : 'other', version: major * 10 + minor };
}

/**
 * Whether the model treats a final assistant message as a prefill; undefined when the id is not
 * read. CATALOGUE anthropic/ends-with-assistant: "Newer Claude models (Sonnet 4.6, Opus 4.6+ and
 * later) do not support assistant prefill ... Older models (4.5 and earlier) treat a final
 * assistant message as prefill" (sources there: smallmain/vscode-unify-chat-provider#249,
 * Tarquinen/opencode-dynamic-context-pruning#520, ericc-ch/copilot-api#261,
 * vybestack/llxprt-code#3695; also anthropics/claude-code#52433 "claude opus or sonnet 4.6 and
 * above", anomalyco/opencode#13768 for claude-opus-4-6 and claude-sonnet-4-6).
 */
export function supportsPrefill(model: string | undefined): boolean | undefined {
  const claude = claudeModelOf(model);
  return claude === undefined ? undefined : claude.version < 46;
}

/**
 * Whether the model accepts a `role: "system"` message inside `messages` (right after a user
 * turn); undefined when the id is not read. CATALOGUE anthropic/system-role-in-messages: "Claude
 * Opus 4.8+ accepts role:'system' only immediately after a user turn"
 * (https://platform.claude.com/docs/en/build-with-claude/mid-conversation-system-messages); the
 * models of the 5 generation after it do too (langchain-ai/langchainjs @langchain/anthropic 1.5.13:
 * Opus 4.8, Opus 5, Opus 5.5, Sonnet 5, Sonnet 5.5, Haiku 5.5 declare mid-conversation system messages).
 */
export function supportsMidConversationSystem(model: string | undefined): boolean | undefined {
  const claude = claudeModelOf(model);
  if (claude === undefined) return undefined;
  return claude.version >= 50 || (claude.family === 'opus' && claude.version >= 48);
}
