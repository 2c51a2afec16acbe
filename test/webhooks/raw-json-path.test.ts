import { describe, expect, it } from 'vitest';
import { idempotencyKeyOf, readRawJsonPath } from '../../src/webhooks/raw-json-path.js';

describe('readRawJsonPath: the value at a path, from the text', () => {
  const text = '{ "a": [1, {"id": 2}], "s": "x\\"}", "event": { "id": 9007199254740993, "n": -1.50e3, "t": true, "o": {} }, "id": "top" }';

  it('finds numbers as written, strings decoded, skips arrays, objects and strings holding braces', () => {
    expect(readRawJsonPath(text, 'event.id')).toEqual({ kind: 'number', text: '9007199254740993' });
    expect(readRawJsonPath(text, 'event.n')).toEqual({ kind: 'number', text: '-1.50e3' });
    expect(readRawJsonPath(text, 'id')).toEqual({ kind: 'string', value: 'top' });
    expect(readRawJsonPath(text, 's')).toEqual({ kind: 'string', value: 'x"}' });
    expect(readRawJsonPath(text, 'event.t')).toEqual({ kind: 'other' });
    expect(readRawJsonPath(text, 'event.o')).toEqual({ kind: 'other' });
  });

  it('answers undefined for a missing name or a path through a non-object', () => {
    expect(readRawJsonPath(text, 'event.missing')).toBeUndefined();
    expect(readRawJsonPath(text, 'id.deeper')).toBeUndefined();
    expect(readRawJsonPath(text, 'a.id')).toBeUndefined();
    expect(readRawJsonPath('{}', 'id')).toBeUndefined();
  });

  it('gives each distinct JSON id its own key', () => {
    const keys = ['1', '1.0', '"1"', '"\\"1\\""', '"abc"', '9007199254740993', '9007199254740992'].map((raw) =>
      idempotencyKeyOf(readRawJsonPath(`{"id":${raw}}`, 'id')!),
    );
    expect(keys).toEqual(['1', '1.0', '"1"', '"\\"1\\""', 'abc', '9007199254740993', '9007199254740992']);
    expect(new Set(keys).size).toBe(keys.length);
  });
});
