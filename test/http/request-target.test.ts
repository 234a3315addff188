import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { targetOf } from '../../src/http/request-target.js';

function viaUrl(href: string): [string, string] | 'invalid' {
  try {
    const url = new URL(href);
    return [url.pathname, url.search];
  } catch {
    return 'invalid';
  }
}

function viaTarget(href: string): [string, string] | 'invalid' {
  try {
    return targetOf(href);
  } catch {
    return 'invalid';
  }
}

test('a plain API path is split by hand', () => {
  assert.deepEqual(targetOf('http://127.0.0.1:8787/v1/chat/completions'), ['/v1/chat/completions', '']);
  assert.deepEqual(targetOf('http://127.0.0.1:8787/v1/models?limit=10&after=a-b'), [
    '/v1/models',
    '?limit=10&after=a-b',
  ]);
  assert.deepEqual(targetOf('http://[::1]:8787/'), ['/', '']);
});

test('any other target gives exactly what the URL parser gives (dot segments, encoding, backslashes, fragments)', () => {
  for (const href of [
    'http://h/v1/../chat/completions',
    'http://h/a b?c d',
    'http://h/a\\b',
    'http://h/a#frag',
    'http://h//double',
    'http://h/a?',
    'http://h/%2e%2e/x',
    'http://h/é',
  ]) {
    assert.deepEqual(viaTarget(href), viaUrl(href), href);
  }
  const piece = fc.constantFrom(
    '/',
    'a',
    'v1',
    '-',
    '_',
    '.',
    '..',
    '?',
    '=',
    '&',
    '%',
    '%2e',
    '+',
    ',',
    ':',
    '#',
    ' ',
    '\\',
    'é',
    '~',
    '"',
    '<',
    '{',
  );
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 16 }), (pieces) => {
      const href = `http://127.0.0.1:8787/${pieces.join('')}`;
      assert.deepEqual(viaTarget(href), viaUrl(href), href);
    }),
    { numRuns: 3000, seed: 20261130 },
  );
});
