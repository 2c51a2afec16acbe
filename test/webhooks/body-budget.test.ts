import { describe, expect, it } from 'vitest';
import { BodyBudget, addressKey } from '../../src/webhooks/body-budget.js';

describe('BodyBudget', () => {
  it('holds one address to its share, and others still get theirs', () => {
    const budget = new BodyBudget(1000, 250);
    expect(budget.tryReserve('a', 200, true)).toBeUndefined();
    expect(budget.tryReserve('a', 100, true)).toBe('address');
    expect(budget.tryReserve('b', 250, true)).toBeUndefined();
    expect(budget.inUse).toBe(450);
    budget.release('a', 200);
    expect(budget.heldBy('a')).toBe(0);
    expect(budget.tryReserve('a', 250, true)).toBeUndefined();
  });

  it('refuses past the whole cap whatever the address', () => {
    const budget = new BodyBudget(1000, 1000);
    expect(budget.tryReserve('a', 900, true)).toBeUndefined();
    expect(budget.tryReserve('b', 200, true)).toBe('total');
    expect(budget.tryReserve(undefined, 100, true)).toBeUndefined();
    expect(budget.tryReserve(undefined, 1, true)).toBe('total');
  });

  it('keeps an eighth for small bodies: larger ones are refused there, small ones still fit', () => {
    const budget = new BodyBudget(1000, 1000);
    expect(budget.reservedBytes).toBe(125);
    expect(budget.tryReserve('a', 800, false)).toBeUndefined();
    expect(budget.tryReserve('b', 100, false)).toBe('unreserved');
    expect(budget.tryReserve('b', 100, true)).toBeUndefined();
    expect(budget.tryReserve('c', 101, true)).toBe('total');
    budget.release('b', 100);
    // A chunked body counted small until it passed SMALL_BODY_BYTES keeps what it took, but may not grow into the reserve.
    expect(budget.tryReserve('b', 60, true)).toBeUndefined();
    expect(budget.tryReserve('b', 20, false)).toBe('unreserved');
  });

  it('cuts the reserve so that one body of the largest size still fits', () => {
    expect(new BodyBudget(1000, 1000, 950).reservedBytes).toBe(50);
    expect(new BodyBudget(1000, 1000, 2000).reservedBytes).toBe(0);
  });

  it('always lets one address hold one whole body of the largest size, and never more than the cap', () => {
    expect(new BodyBudget(64, 16, 32).perAddressBytes).toBe(32);
    expect(new BodyBudget(64, 128).perAddressBytes).toBe(64);
  });
});

describe('addressKey', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::9', '2001:db8:1:2::/64'],
    ['2001:DB8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    [undefined, undefined],
  ])('%s → %s', (address, key) => {
    expect(addressKey(address)).toBe(key);
  });
});
