import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { matchesSnapshot, takeSnapshot } from '../../src/session/json-snapshot.js';
import { seededRandom } from '../support/random.js';
import { adversarialSession, asJson } from './helpers.js';

/** A change somewhere inside `value` (in place), chosen by `pick`; false if it found nothing to change. */
function mutate(value: unknown, pick: () => number): boolean {
  if (value === null || typeof value !== 'object') return false;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  if (keys.length === 0) {
    if (Array.isArray(value)) value.push(1);
    else record.added = 1;
    return true;
  }
  const key = keys[Math.floor(pick() * keys.length)]!;
  const inner = record[key];
  if (inner !== null && typeof inner === 'object' && pick() < 0.7) return mutate(inner, pick);
  switch (Math.floor(pick() * 4)) {
    case 0:
      record[key] = typeof inner === 'string' ? `${inner}x` : 'x';
      return true;
    case 1:
      if (Array.isArray(value)) value.splice(Number(key), 1);
      else delete record[key];
      return true;
    case 2:
      record[key] = inner === null ? 0 : null;
      return true;
    default: {
      // The same keys in another order: another JSON text.
      if (Array.isArray(value) || keys.length < 2) {
        record[key] = [inner];
        return true;
      }
      delete record[key];
      record[key] = inner;
      return true;
    }
  }
}

describe('takeSnapshot / matchesSnapshot', () => {
  it('matches the values it was taken from, and values with the same JSON in new objects', () => {
    fc.assert(
      fc.property(adversarialSession, (messages) => {
        const snapshot = takeSnapshot(messages);
        assert.ok(snapshot !== undefined);
        assert.ok(matchesSnapshot(messages, snapshot));
        assert.ok(matchesSnapshot(asJson(messages), snapshot));
      }),
      { numRuns: 300, seed: 5 },
    );
  });

  it('never matches once the JSON changed in place (any field, any depth, key order included)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.jsonValue({ maxDepth: 4 }), { minLength: 1, maxLength: 5 }),
        fc.integer(),
        (values, seed) => {
          const pick = seededRandom(seed);
          const snapshot = takeSnapshot(values);
          assert.ok(snapshot !== undefined);
          const before = JSON.stringify(values);
          const index = Math.floor(pick() * values.length);
          if (!mutate(values[index], pick)) values[index] = [values[index]!];
          assert.equal(matchesSnapshot(values, snapshot), JSON.stringify(values) === before);
        },
      ),
      { numRuns: 1000, seed: 9 },
    );
  });

  it('does not match an object that is not plain data where a plain one was, nor an array of another length', () => {
    const values: unknown[] = [{ role: 'user', content: { at: {} } }];
    const snapshot = takeSnapshot(values)!;
    (values[0] as { content: { at: unknown } }).content.at = new Date(0); // JSON.stringify writes it as a string
    assert.equal(matchesSnapshot(values, snapshot), false);
    assert.equal(matchesSnapshot([...values, {}], snapshot), false);
    assert.equal(matchesSnapshot([], snapshot), false);
  });

  it('takes no snapshot of what is not plain JSON data', () => {
    class Message {
      role = 'user';
    }
    assert.equal(takeSnapshot([new Message()]), undefined);
    assert.equal(takeSnapshot([{ role: 'user', at: new Date(0) }]), undefined);
    assert.equal(takeSnapshot([{ role: 'user', toJSON: () => 'x' }]), undefined);
    assert.equal(takeSnapshot([{ role: 'user', big: 1n }]), undefined);
    assert.notEqual(takeSnapshot([Object.assign(Object.create(null) as object, { role: 'user' })]), undefined);
  });
});
