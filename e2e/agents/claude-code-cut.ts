import { spawnSync } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import type { EmulatedRequest } from '../../src/emulator/index.js';

/**
 * Claude Code step 3d: the session cut right after the call's event (a crash while the tool ran), with an
 * attachment hung from the call (as Claude Code hangs a prompt_snapshot from the row before its next request) and
 * a `last-prompt` line naming the call as the leaf. `unstuck fix --write` must add the result after the chain's
 * tip (the attachment, not beside it) and point `leafUuid` at it: else Claude Code, told to resume from the call,
 * which is still a leaf through its attachment, never sends the added result. Then `claude --resume` straight at
 * the strict emulator must complete and send that result.
 */
export async function resumeCutAtCall(context: {
  log(line: string): void;
  expect(ok: boolean, what: string): void;
  file: string;
  original: string;
  unstuck: readonly string[];
  seen: EmulatedRequest[];
  /** Resumes the session straight at the emulator; the requests it made are `seen` after the call. */
  resume(): Promise<{ code: number | null; result: string | undefined }>;
  answer: string;
}): Promise<void> {
  const { log, expect, file, original } = context;
  const lines = original.split('\n');
  const records = lines.map((line) => {
    try {
      return JSON.parse(line) as Record<string, any>;
    } catch {
      return undefined;
    }
  });
  const call = records.findIndex(
    (record) =>
      record?.['type'] === 'assistant' &&
      Array.isArray(record['message']?.content) &&
      record['message'].content.some((block: any) => block?.type === 'tool_use'),
  );
  const attachment = records.findIndex((record, index) => index > call && record?.['type'] === 'attachment');
  const callRecord = records[call];
  const attachmentRecord = records[attachment];
  if (callRecord === undefined || attachmentRecord === undefined) {
    expect(false, 'the session has a call event and an attachment after it');
    return;
  }
  const cut = [
    ...lines.slice(0, call + 1),
    JSON.stringify({ ...attachmentRecord, parentUuid: callRecord['uuid'] }),
    JSON.stringify({
      type: 'last-prompt',
      lastPrompt: 'What does notes.txt say?',
      leafUuid: callRecord['uuid'],
      sessionId: callRecord['sessionId'],
    }),
    '',
  ].join('\n');
  await writeFile(file, cut);
  const fixed = spawnSync(context.unstuck[0] as string, [...context.unstuck.slice(1), 'fix', '--write', file], {
    encoding: 'utf8',
  });
  log(`   unstuck fix exit ${fixed.status}`);
  for (const line of fixed.stderr.trim().split('\n')) log(`      ${line}`);
  expect(fixed.status === 0, 'unstuck fix --write answers the call the session was cut after');
  const mended = (await readFile(file, 'utf8')).split('\n').filter(Boolean);
  const added = mended
    .map((line) => JSON.parse(line) as Record<string, any>)
    .find((record) => record['parentUuid'] === attachmentRecord['uuid']);
  const prompt = mended.map((line) => JSON.parse(line) as Record<string, any>).find((r) => r['type'] === 'last-prompt');
  log(
    `   the added result event hangs from ${added === undefined ? 'not the attachment' : 'the attachment'}; last-prompt leafUuid ${prompt?.['leafUuid'] === added?.['uuid'] ? 'names it' : 'still names the call'}`,
  );
  const before = context.seen.length;
  const resumed = await context.resume();
  const requests = context.seen.slice(before);
  log(
    `   resumed: exit ${resumed.code}, emulator saw ${requests.map((request) => request.status).join(', ')}; result: ${JSON.stringify(resumed.result)}`,
  );
  expect(
    resumed.code === 0 && resumed.result === context.answer,
    'after the fix, the session cut after the call resumes straight at the strict emulator',
  );
  expect(
    requests.some((request) => JSON.stringify(request.body).includes('did not complete')),
    'Claude Code sent the result unstuck added after the attachment (it resumed from the new leaf)',
  );
  await rm(`${file}.bak`, { force: true });
  await writeFile(file, original);
}
