/**
 * The parts of `unstuck/agent` and `unstuck/session` the chat relies on, named in one place.
 * `ChangeLike` and `AgentLike` keep the chat's own code readable and let tests pass stand-ins.
 */
export type { Agent as AgentLike, AgentEvent, Tool } from '../../agent/index.js';
export type { Change as ChangeLike } from '../../core/changes.js';
export type { SessionProblem, SessionStore as SessionStoreLike } from '../../session/index.js';
