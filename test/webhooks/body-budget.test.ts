import { describe, expect, it } from 'vitest';
import { BodyBudget, addressKey } from '../../src/webhooks/body-budget.js';

describe('BodyBudget', () => {
  it('holds one address to its share, and others still get theirs', () => {
    const budget = new BodyBudget(1000, 250);
    expect(budget.tryReserve('a', 200)).toBeUndefined();
    expect(budget.tryReserve('a', 100)).toBe('address');
    expect(budget.tryReserve('b', 250)).toBeUndefined();
    expect(budget.inUse).toBe(450);
    budget.release('a', 200);
    expect(budget.heldBy('a')).toBe(0);
    expect(budget.tryReserve('a', 250)).toBeUndefined();
  });

  it('refuses past the whole cap whatever the address', () => {
    const budget = new BodyBudget(1000, 1000);
    expect(budget.tryReserve('a', 900)).toBeUndefined();
    expect(budget.tryReserve('b', 200)).toBe('total');
    expect(budget.tryReserve(undefined, 100)).toBeUndefined();
    expect(budget.tryReserve(undefined, 1)).toBe('total');
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
