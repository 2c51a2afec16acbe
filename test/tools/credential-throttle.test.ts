import { describe, expect, it } from 'vitest';
import {
  CredentialThrottle,
  FAILURE_WINDOW_MS,
  FIRST_BLOCK_MS,
  MAX_BLOCK_MS,
  MAX_FAILURES_PER_ADDRESS,
  MAX_GLOBAL_FAILURES,
  OFFENCE_MEMORY_MS,
} from '../../src/http/credential-throttle.js';

/** `count` wrong credentials from `address`, one a second from `startMs`; returns when the last was sent. */
function failMany(throttle: CredentialThrottle, address: string, count: number, startMs: number): number {
  for (let i = 0; i < count; i++) throttle.fail(address, startMs + i * 1000);
  return startMs + (count - 1) * 1000;
}

describe('CredentialThrottle', () => {
  it('blocks an address once it has sent 10 wrong credentials in a minute; others are not affected; a right one forgives its failures', async () => {
    const t = new CredentialThrottle();
    const last = failMany(t, '192.0.2.1', MAX_FAILURES_PER_ADDRESS - 1, 0);
    expect(t.blockFor('192.0.2.1', last)).toBeUndefined();
    t.fail('192.0.2.1', last + 1000);
    expect(t.blockFor('192.0.2.1', last + 1000)).toEqual({ scope: 'address', retryAfterMs: FIRST_BLOCK_MS });
    expect(t.blockFor('192.0.2.2', last + 1000)).toBeUndefined();
    expect(t.blockFor('192.0.2.1', last + 1000 + FIRST_BLOCK_MS)).toBeUndefined();

    failMany(t, '192.0.2.3', MAX_FAILURES_PER_ADDRESS - 1, 0);
    expect(await t.admit('192.0.2.3', () => 20_000)).toBeUndefined();
    t.settle('192.0.2.3', 20_000, 'right');
    t.fail('192.0.2.3', 21_000);
    expect(t.blockFor('192.0.2.3', 21_000)).toBeUndefined(); // counting starts again after the right one
  });

  it('failures older than the window do not count', () => {
    const t = new CredentialThrottle();
    failMany(t, '192.0.2.1', MAX_FAILURES_PER_ADDRESS - 1, 0);
    t.fail('192.0.2.1', FAILURE_WINDOW_MS + 1);
    expect(t.blockFor('192.0.2.1', FAILURE_WINDOW_MS + 1)).toBeUndefined();
  });

  it('counts IPv6 addresses by their /64, and an IPv4-mapped address as IPv4', () => {
    const t = new CredentialThrottle();
    for (let i = 0; i < MAX_FAILURES_PER_ADDRESS; i++) t.fail(`2001:db8:1:2::${i.toString(16)}`, 1000);
    expect(t.blockFor('2001:db8:1:2:ffff::1', 1000)?.scope).toBe('address');
    expect(t.blockFor('2001:db8:1:3::1', 1000)).toBeUndefined();
    failMany(t, '::ffff:198.51.100.7', MAX_FAILURES_PER_ADDRESS, 0);
    expect(t.blockFor('198.51.100.7', 10_000)?.scope).toBe('address');
  });

  it('doubles the block on each repeat offence up to 15 minutes, and starts again at 1 minute after an hour without one', () => {
    const t = new CredentialThrottle();
    const blocks: number[] = [];
    let now = 0;
    for (let round = 0; round < 6; round++) {
      now = failMany(t, '192.0.2.1', MAX_FAILURES_PER_ADDRESS, now);
      const block = t.blockFor('192.0.2.1', now)!;
      blocks.push(block.retryAfterMs);
      now += block.retryAfterMs;
    }
    expect(blocks).toEqual([1, 2, 4, 8, 15, 15].map((minutes) => minutes * 60_000));
    expect(Math.max(...blocks)).toBe(MAX_BLOCK_MS);
    now = failMany(t, '192.0.2.1', MAX_FAILURES_PER_ADDRESS, now + OFFENCE_MEMORY_MS);
    expect(t.blockFor('192.0.2.1', now)?.retryAfterMs).toBe(FIRST_BLOCK_MS);
  });

  it('past 100 wrong credentials from everyone, blocks the addresses that sent one, but not one never seen nor one that used the right one', async () => {
    const t = new CredentialThrottle();
    expect(await t.admit('203.0.113.9', () => 0)).toBeUndefined();
    t.settle('203.0.113.9', 0, 'right'); // the admin, before the flood
    for (let i = 0; i < MAX_GLOBAL_FAILURES; i++) t.fail(`198.51.${Math.floor(i / 200)}.${i % 200}`, 1000);
    expect(t.blockFor('198.51.0.1', 2000)).toEqual({ scope: 'everyone', retryAfterMs: FIRST_BLOCK_MS - 1000 });
    expect(t.blockFor('192.0.2.50', 2000)).toBeUndefined(); // never seen: still compared
    t.fail('192.0.2.50', 2000);
    expect(t.blockFor('192.0.2.50', 2000)?.scope).toBe('everyone'); // until it fails
    t.fail('203.0.113.9', 2000); // the admin's typo
    expect(t.blockFor('203.0.113.9', 2000)).toBeUndefined();
    expect(t.blockFor('198.51.0.1', 1000 + FIRST_BLOCK_MS)).toBeUndefined();
  });

  it('lets an untrusted address have no more credentials in flight than it has guesses left: the others wait for an answer and look again', async () => {
    const t = new CredentialThrottle();
    const now = () => 5000;
    failMany(t, '192.0.2.1', 3, 0);
    for (let i = 0; i < MAX_FAILURES_PER_ADDRESS - 3; i++) expect(await t.admit('192.0.2.1', now)).toBeUndefined();
    const waiting = Array.from({ length: 20 }, () => t.admit('192.0.2.1', now));
    t.settle('192.0.2.1', 5000, undefined); // answered without a verdict (a 413): one slot is free again
    expect(await waiting[0]).toBeUndefined();
    for (let i = 0; i < MAX_FAILURES_PER_ADDRESS - 3; i++) t.settle('192.0.2.1', 5000, 'wrong'); // the block starts
    expect(await Promise.all(waiting.slice(1))).toEqual(Array(19).fill({ scope: 'address', retryAfterMs: FIRST_BLOCK_MS }));
  });

  it('a right credential lets every waiting request of its address through, and a trusted address is not limited', async () => {
    const t = new CredentialThrottle();
    const now = () => 0;
    for (let i = 0; i < MAX_FAILURES_PER_ADDRESS; i++) expect(await t.admit('203.0.113.9', now)).toBeUndefined();
    const waiting = Array.from({ length: 30 }, () => t.admit('203.0.113.9', now));
    t.settle('203.0.113.9', 0, 'right');
    expect(await Promise.all(waiting)).toEqual(Array(30).fill(undefined));
    for (let i = 0; i < 3 * MAX_FAILURES_PER_ADDRESS; i++) expect(await t.admit('203.0.113.9', now)).toBeUndefined();
  });

  it('without an address (a Next.js route) checks first: never refuses unread, and a wrong one past the limit gets the block that held', async () => {
    const t = new CredentialThrottle();
    for (let i = 0; i < MAX_FAILURES_PER_ADDRESS; i++) {
      expect(await t.admit(undefined, () => 0)).toBeUndefined();
      expect(t.settle(undefined, 0, 'wrong')).toBeUndefined();
    }
    expect(await t.admit(undefined, () => 0)).toBeUndefined(); // the right one may be in this one
    expect(t.settle(undefined, 0, 'right')).toBeUndefined();
    expect(t.settle(undefined, 0, 'wrong')).toEqual({ scope: 'address', retryAfterMs: FIRST_BLOCK_MS });
  });
});
