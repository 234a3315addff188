import type { Message } from '../core/index.js';
import type { AgentConfig, WireTool } from './resolve-agent-options.js';

/**
 * The body of one chat-completions request: the runner's model, streaming and thinking settings,
 * these messages as they are, and the tools when given. A turn's request passes the tools (its
 * messages already led by the system prompt); a compaction's summarizing request passes none.
 */
export function requestBody(
  config: Pick<AgentConfig, 'model' | 'stream' | 'thinkingField'>,
  messages: readonly Message[],
  tools?: readonly WireTool[],
): Record<string, unknown> {
  const body: Record<string, unknown> = { model: config.model, messages, stream: config.stream };
  if (config.stream) body['stream_options'] = { include_usage: true };
  if (tools !== undefined) body['tools'] = tools;
  if (config.thinkingField !== undefined) body['thinking'] = config.thinkingField;
  return body;
}
