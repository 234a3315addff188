export { createAgent } from './create-agent.js';
export type { Agent, AgentEvent, AgentOptions, RetryOptions, Tool } from './types.js';
