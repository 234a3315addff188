import assert from 'node:assert/strict';
import { test } from 'node:test';
import { redactSecrets, redactTarget } from '../../src/http/redact-secrets.js';

test('a logged target keeps its query, each key-like value redacted', () => {
  assert.equal(redactTarget('/v1/messages', '?beta=true'), '/v1/messages?beta=true');
  assert.equal(redactTarget('/g', '?alt=sse&key=AIza123'), '/g?alt=sse&key=REDACTED');
  assert.equal(
    redactTarget('/g', '?api_key=a&access_token=b&x-api-key=c&KEY=d'),
    '/g?api_key=REDACTED&access_token=REDACTED&x-api-key=REDACTED&KEY=REDACTED',
  );
  assert.equal(redactTarget('/g', '?k%65y=AIza'), '/g?k%65y=REDACTED', 'a percent-encoded name is read as decoded');
  assert.equal(redactTarget('/g', '?monkey=1&keyboard=2'), '/g?monkey=1&keyboard=2');
  assert.equal(redactTarget('/g', ''), '/g');
});

test('an error text that quotes a URL loses the key in it', () => {
  assert.equal(
    redactSecrets('connect ECONNREFUSED http://h/x?alt=sse&key=AIza123 (retry)'),
    'connect ECONNREFUSED http://h/x?alt=sse&key=REDACTED (retry)',
  );
  assert.equal(redactSecrets('no query here'), 'no query here');
});
