import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { formatConfigWarning, loadChatConfig, profileForURL } from '../../src/cli/chat/chat-config.js';
import { isUnstuckError } from '../../src/core/errors.js';
import { profileNames } from '../../src/core/profiles.js';

let cwd: string;
beforeEach(async () => {
  cwd = await mkdtemp(join(tmpdir(), 'unstuck-chat-config-'));
});
afterEach(async () => {
  await rm(cwd, { recursive: true, force: true });
});

async function writeConfig(text: string): Promise<void> {
  await mkdir(join(cwd, '.unstuck'), { recursive: true });
  await writeFile(join(cwd, '.unstuck', 'config.json'), text);
}

describe('loadChatConfig', () => {
  it('uses DeepSeek and its key by default', async () => {
    const { config, warnings } = await loadChatConfig({ flags: {}, env: { DEEPSEEK_API_KEY: 'sk-d', OPENAI_API_KEY: 'sk-o' }, cwd });
    assert.deepEqual(config, { baseURL: 'https://api.deepseek.com', apiKey: 'sk-d', model: 'deepseek-chat', profile: 'deepseek' });
    assert.deepEqual(warnings, []);
  });

  it('takes OPENAI_API_KEY with --base-url, and flags over the file', async () => {
    await writeConfig('{"model":"from-file","baseURL":"http://file.example/v1"}');
    const { config } = await loadChatConfig({ flags: { baseURL: 'https://api.openai.com/v1/', model: 'gpt-x' }, env: { OPENAI_API_KEY: 'sk-o' }, cwd });
    assert.equal(config.baseURL, 'https://api.openai.com/v1');
    assert.equal(config.apiKey, 'sk-o');
    assert.equal(config.model, 'gpt-x');
    assert.equal(config.profile, 'openai');
  });

  it('fails with one sentence naming the variable when there is no key', async () => {
    await assert.rejects(loadChatConfig({ flags: {}, env: { OPENAI_API_KEY: 'sk-o' }, cwd }), (error) => {
      assert.ok(isUnstuckError(error));
      assert.equal(error.message, 'no API key: set DEEPSEEK_API_KEY (or OPENAI_API_KEY together with --base-url)');
      return true;
    });
  });

  it('reports unknown and stale values with file, line and key, and still starts', async () => {
    await writeConfig(['{', '  "model": "m1",', '  "provider": "nexforge",', '  "base_url": "http://127.0.0.1:9/v1",', '  "profile": "deepseek-v9",', '  "apiKey": "sk-never",', '  "colour": true', '}'].join('\n'));
    const { config, warnings } = await loadChatConfig({ flags: {}, env: { OPENAI_API_KEY: 'sk-o' }, cwd });
    assert.equal(config.model, 'm1');
    assert.equal(config.baseURL, 'http://127.0.0.1:9/v1');
    assert.equal(config.profile, 'openai');
    assert.deepEqual(warnings.map(formatConfigWarning), [
      '.unstuck/config.json:3: provider: no longer used: set "baseURL" and, if needed, "profile"; ignored',
      '.unstuck/config.json:4: base_url: renamed to "baseURL"; the value is used, please rename it',
      `.unstuck/config.json:5: profile: unknown profile "deepseek-v9", ignored (one of: ${profileNames.join(', ')})`,
      '.unstuck/config.json:6: apiKey: keys are not read from the config file (use DEEPSEEK_API_KEY or OPENAI_API_KEY), ignored',
      '.unstuck/config.json:7: colour: unknown setting, ignored',
    ]);
  });

  it('ignores a file that is not JSON, saying so', async () => {
    await writeConfig('{ "model": ');
    const { config, warnings } = await loadChatConfig({ flags: {}, env: { DEEPSEEK_API_KEY: 'sk-d' }, cwd });
    assert.equal(config.model, 'deepseek-chat');
    assert.equal(warnings.length, 1);
    assert.match(formatConfigWarning(warnings[0]!), /^\.unstuck\/config\.json: is not valid JSON .*the whole file is ignored$/);
  });

  it('rejects a bad flag as a usage error', async () => {
    await assert.rejects(loadChatConfig({ flags: { baseURL: 'ftp://x' }, env: { OPENAI_API_KEY: 'k' }, cwd }), /--base-url must be an http\(s\) URL/);
    await assert.rejects(loadChatConfig({ flags: { profile: 'nope' }, env: { DEEPSEEK_API_KEY: 'k' }, cwd }), /unknown --profile 'nope'/);
  });

  it('guesses the profile from the host', () => {
    assert.equal(profileForURL('https://api.deepseek.com'), 'deepseek');
    assert.equal(profileForURL('https://api.mistral.ai/v1'), 'mistral');
    assert.equal(profileForURL('http://127.0.0.1:8080/v1'), 'openai');
  });
});
