import { describe, expect, it } from 'vitest';
import type { ClaimedEvent } from '../../src/db/inbox-queue.js';
import { MalformedPayloadError } from '../../src/inbox/handlers/registry.js';
import { MAX_ERROR_CHARS, settleFailure, settleWithoutHandler } from '../../src/inbox/settle.js';

const policy = { maxAttempts: 3, baseDelayMs: 1000, maxDelayMs: 60_000 };
const event = (attempts: number): ClaimedEvent => ({
  id: 7,
  source: 'auth',
  key: 'msg_1',
  type: 'user.created',
  payload: {},
  attempts,
  receivedAt: new Date(0),
  lockedUntil: new Date(0),
  deliveries: null,
});
const NOW = 1_000_000;

describe('settle decisions (no database)', () => {
  it('no handler: ignored; claimed past the limit: dead with the reason; otherwise: run it', () => {
    expect(settleWithoutHandler(event(1), false, policy)).toEqual({ id: 7, attempts: 1, status: 'ignored' });
    expect(settleWithoutHandler(event(4), true, policy)).toMatchObject({ status: 'dead', error: expect.stringMatching(/^Claimed 4 times without finishing/) });
    expect(settleWithoutHandler(event(3), true, policy)).toBeUndefined();
  });

  it('a thrown error: failed and due after the jittered backoff, dead when out of attempts, dead at once when malformed', () => {
    expect(settleFailure(event(1), new Error('boom'), policy, NOW, () => 0)).toEqual({
      id: 7,
      attempts: 1,
      status: 'failed',
      error: 'boom',
      nextAttemptAt: new Date(NOW + 500),
    });
    expect(settleFailure(event(2), new Error('boom'), policy, NOW, () => 0.999)).toMatchObject({ status: 'failed', nextAttemptAt: new Date(NOW + 1999) });
    expect(settleFailure(event(3), new Error('boom'), policy, NOW, () => 0)).toEqual({
      id: 7,
      attempts: 3,
      status: 'dead',
      error: 'boom (gave up after 3 attempts)',
    });
    expect(settleFailure(event(1), new MalformedPayloadError('no id'), policy, NOW, () => 0)).toEqual({ id: 7, attempts: 1, status: 'dead', error: 'no id' });
    const long = settleFailure(event(1), new Error('x'.repeat(5000)), policy, NOW, () => 0);
    expect(long.status === 'failed' && long.error.length).toBe(MAX_ERROR_CHARS);
  });
});
