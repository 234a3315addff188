// e2e fixture. In real life `ctx.tools[TOOL_RUNTIME_SCHEDULER]` is undefined when a plugin ships a
// private copy of dsh-tools (a second `Symbol('@deepseek-ai/dsh-tools.scheduler')`); the agent
// loop then logs `tool/call` and dies on `.prepare`. This fixture empties the slot for the run.
import { TOOL_RUNTIME_SCHEDULER } from '@deepseek-ai/dsh-tools';

export const name = 'unstuck-dsh-e2e-crasher';
export const inject = ['tools'];

export function apply(ctx) {
  const tools = ctx.tools;
  const original = tools[TOOL_RUNTIME_SCHEDULER];
  tools[TOOL_RUNTIME_SCHEDULER] = undefined;
  ctx.effect(() => () => {
    tools[TOOL_RUNTIME_SCHEDULER] = original;
  });
}
