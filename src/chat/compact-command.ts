import type { Agent } from '../agent/index.js';
import type { ChatRenderer } from './chat-renderer.js';

/** `/compact`: summarizes the older turns of the session now, drawing each step as the renderer does for a turn. */
export async function compactCommand(agent: Agent, renderer: ChatRenderer, signal: AbortSignal): Promise<void> {
  if (agent.compact === undefined) {
    renderer.note('this agent cannot compact its history');
    return;
  }
  renderer.waiting('summarizing the older turns');
  for await (const event of agent.compact({ signal })) renderer.handle(event);
  renderer.pause();
}
