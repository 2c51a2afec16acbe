import { describe, expect, it } from 'vitest';
import { bearerToken, secureEqual, secureEqualAny } from '../../src/secure-compare.js';

describe('secure-compare', () => {
  it('matches equal secrets only, whatever their lengths; an empty or missing offer never matches', () => {
    expect(secureEqual('s3cret-token', 's3cret-token')).toBe(true);
    expect(secureEqual('s3cret-tokeN', 's3cret-token')).toBe(false);
    expect(secureEqual('s3cret', 's3cret-token')).toBe(false);
    expect(secureEqual('s3cret-token-and-more', 's3cret-token')).toBe(false);
    expect(secureEqual('', '')).toBe(false);
    expect(secureEqual(undefined, 's3cret-token')).toBe(false);
    expect(secureEqual(Buffer.from('abc'), 'abc')).toBe(true);
  });

  it('a rotation list matches any of its secrets; a bearer header yields its token', () => {
    expect(secureEqualAny('new', ['old', 'new'])).toBe(true);
    expect(secureEqualAny('other', ['old', 'new'])).toBe(false);
    expect(bearerToken('Bearer  abc ')).toBe('abc');
    expect(bearerToken('bearer abc')).toBe('abc');
    expect(bearerToken('Basic abc')).toBeUndefined();
    expect(bearerToken(undefined)).toBeUndefined();
  });
});
