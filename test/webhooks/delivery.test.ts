import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import { MAX_JSON_DEPTH, parseJsonObject } from '../../src/webhooks/delivery.js';

const bytes = (text: string) => new TextEncoder().encode(text);
const nested = (levels: number) => `{"a":${'['.repeat(levels - 1)}${']'.repeat(levels - 1)}}`;

function refusal(text: string): AppError | undefined {
  try {
    parseJsonObject(bytes(text));
    return undefined;
  } catch (error) {
    return error as AppError;
  }
}

describe('parseJsonObject nesting limit', () => {
  it(`accepts ${MAX_JSON_DEPTH} levels and refuses one more`, () => {
    expect(refusal(nested(MAX_JSON_DEPTH))).toBeUndefined();
    const error = refusal(nested(MAX_JSON_DEPTH + 1));
    expect(error?.code).toBe('invalid_payload');
    expect(error?.message).toContain(`deeper than ${MAX_JSON_DEPTH} levels`);
  });

  it('counts nesting, not openers: many shallow objects and braces inside strings pass', () => {
    const siblings = `{"items":[${Array.from({ length: 3 * MAX_JSON_DEPTH }, (_, i) => `{"n":${i}}`).join(',')}]}`;
    expect(parseJsonObject(bytes(siblings)).value.items).toHaveLength(3 * MAX_JSON_DEPTH);
    const inStrings = JSON.stringify({ text: '{['.repeat(4 * MAX_JSON_DEPTH), quoted: '\\"{{{' });
    expect(parseJsonObject(bytes(inStrings)).value.text).toBe('{['.repeat(4 * MAX_JSON_DEPTH));
  });

  it('refuses deep nesting hidden after many shallow openers', () => {
    const shallow = Array.from({ length: MAX_JSON_DEPTH }, (_, i) => `"k${i}":{}`).join(',');
    const error = refusal(`{${shallow},"deep":${nested(MAX_JSON_DEPTH + 1)}}`);
    expect(error?.code).toBe('invalid_payload');
  });
});
