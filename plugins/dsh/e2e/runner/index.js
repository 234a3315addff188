// e2e fixture: `@deepseek-ai/dsh-headless` 0.1.0-rc.8's runner (one task, print the final
// assistant text, exit 0 only when the turn completed), except that the session id comes from
// the config and an existing session is resumed from persistence instead of a new one created.
// That is what lets the e2e start a run from a session a previous run left crashed.

import { installModelSelection } from '@deepseek-ai/dsh-agent';
import { toolPairingBalancedAfter } from '@deepseek-ai/dsh-compaction';
import { createUserMessage } from '@deepseek-ai/dsh-llm';
import { SessionId } from '@deepseek-ai/dsh-session';
import z from '@deepseek-ai/schemastery';

export const name = 'unstuck-dsh-e2e-runner';
export const inject = ['agentDefaultModel', 'agents', 'sessions', 'agentLoop', 'sessionPersistence'];
export const Config = z.object({ task: z.string().required(), session: z.string().required() });

function summarize(events, firstSeq) {
  let started = false;
  let text = '';
  let reason;
  for (const event of events) {
    if (event.seq < firstSeq) continue;
    if (event.type === 'turn/start') {
      started = true;
      continue;
    }
    if (!started) continue;
    if (event.type === 'assistant/message') {
      const joined = event.data.message.content
        .filter((block) => block.type === 'text')
        .map((block) => block.text)
        .join('');
      if (joined !== '') text = joined;
    }
    if (event.type === 'turn/end') reason = event.data.reason;
  }
  return { text, reason };
}

async function run(ctx, config, exit) {
  await ctx.get('loader')?.await();
  const selection = ctx.get('agentDefaultModel').currentSelection();
  const persistence = ctx.get('sessionPersistence');
  const exists = (await persistence.list()).some((header) => header.id === config.session);
  const setup = (agentCtx) => {
    installModelSelection(agentCtx, { current: selection, assembled: undefined });
  };
  const agentOptions = { provider: selection.provider, model: selection.model };
  const handle = exists
    ? await ctx.get('agentLoop').resume(ctx, { resumeSessionId: SessionId(config.session), agentOptions, setup })
    : await ctx
        .get('agents')
        .create({ sessionId: SessionId(config.session), meta: { cwd: process.cwd() }, agentOptions, setup });
  const agent = handle.agent ?? handle;
  await agent.whenIdle();
  const firstSeq = agent.session.seq;
  agent.followup(createUserMessage({ content: [{ type: 'text', text: config.task }], source: { kind: 'user' } }));
  await agent.whenIdle();
  await ctx.get('sessions').flush(agent.session);
  const outcome = summarize(agent.session.events, firstSeq);
  const turns = agent.session.events
    .filter((event) => event.seq >= firstSeq && event.type === 'turn/end')
    .map((event) => event.data.reason.kind);
  process.stdout.write(`${outcome.text}\n`);
  const nodes = agent.session.surface.nodes;
  const balanced = nodes.length === 0 || toolPairingBalancedAfter(agent.session, nodes[nodes.length - 1]);
  const replacements = agent.session.events.filter((event) => typeof event.surfaceOp === 'object').length;
  process.stderr.write(
    `e2e-runner: ${exists ? 'resumed' : 'created'} ${config.session}; turns this run: ${turns.join(', ')}; surface replacements in the log: ${replacements}; compaction balance: ${balanced ? 'balanced' : 'open'}\n`,
  );
  if (outcome.reason?.kind === 'error')
    process.stderr.write(`dsh: ${outcome.reason.error.code}: ${outcome.reason.error.message}\n`);
  exit(outcome.reason?.kind === 'completed' ? 0 : 1);
}

export function apply(ctx, config) {
  const exit = ctx.get('appExit');
  run(ctx, config, exit).catch((error) => {
    process.stderr.write(`dsh: ${error instanceof Error ? error.stack : String(error)}\n`);
    exit(1);
  });
}
