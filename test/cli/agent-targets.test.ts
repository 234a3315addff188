import assert from 'node:assert/strict';
import { test } from 'node:test';
import { detectAgent } from '../../src/cli/agent-targets.js';

test('the agent is told by the basename of its command, whatever its path or launcher suffix', () => {
  assert.equal(detectAgent('claude').name, 'claude');
  assert.equal(detectAgent('/home/me/.local/bin/claude').name, 'claude');
  assert.equal(detectAgent('C:\\tools\\codex.cmd'.replaceAll('\\', '/')).name, 'codex');
  assert.equal(detectAgent('gemini').name, 'gemini');
  assert.equal(detectAgent('qwen').name, 'qwen');
  assert.equal(detectAgent('opencode').name, 'opencode');
  assert.equal(detectAgent('node').name, 'generic');
  assert.equal(detectAgent('claudette').name, 'generic');
});

test('each agent reads the variables it honours; codex also gets the one-run config override', () => {
  assert.deepEqual(
    detectAgent('claude').variables.map((variable) => variable.name),
    ['ANTHROPIC_BASE_URL'],
  );
  assert.deepEqual(
    detectAgent('gemini').variables.map((variable) => variable.name),
    ['GOOGLE_GEMINI_BASE_URL'],
  );
  assert.deepEqual(
    detectAgent('qwen').variables.map((variable) => variable.providerDefault),
    ['https://api.openai.com/v1'],
  );
  assert.deepEqual(detectAgent('codex').arguments?.(['http://127.0.0.1:5/v1']), [
    '-c',
    'openai_base_url="http://127.0.0.1:5/v1"',
  ]);
  assert.equal(detectAgent('codex').tokenInUrl, false, 'Codex is pointed on its command line: no token there');
  assert.equal(detectAgent('opencode').note, undefined, 'OpenCode is pointed for the run, no line to add by hand');
});
