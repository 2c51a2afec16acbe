import { describe, expect, it } from 'vitest';
import type { ClaimedDelivery } from '../../src/deliveries/claimed.js';
import { MalformedPayloadError } from '../../src/api/malformed-payload.js';
import { MAX_ERROR_CHARS, settleFailure, settleOverClaimed, settleProcessed } from '../../src/deliveries/outcome.js';
import { stackOf } from '../../src/deliveries/stack.js';

const policy = { maxAttempts: 3, baseDelayMs: 1000, maxDelayMs: 60_000 };
const delivery = (attempts: number): ClaimedDelivery => ({
  id: 70,
  handler: 'h',
  attempts,
  flowKey: null,
  shared: false,
  startAt: 0,
  event: { id: 7, source: 'auth', key: 'msg_1', type: 'user.created', payload: {}, attempts, receivedAt: new Date(0) },
});
const NOW = 1_000_000;
const timing = { startedAt: NOW - 5, durationMs: 5 };
const failure = (attempts: number, error: unknown, random = 0, ordered = false) =>
  settleFailure(delivery(attempts), error, { policy, now: NOW, random: () => random, ordered, timing });

describe('settle decisions (no database)', () => {
  it('claimed past the limit: dead (parked when ordered) with the reason; otherwise: run it; returned: processed', () => {
    expect(settleOverClaimed(delivery(4), policy, false, NOW)).toMatchObject({
      id: 70,
      eventId: 7,
      status: 'dead',
      error: expect.stringMatching(/^Claimed 4 times without finishing/),
    });
    expect(settleOverClaimed(delivery(4), policy, true, NOW)).toMatchObject({ status: 'parked' });
    expect(settleOverClaimed(delivery(3), policy, false, NOW)).toBeUndefined();
    expect(settleProcessed(delivery(1), timing)).toEqual({ id: 70, eventId: 7, attempts: 1, status: 'processed', ...timing });
  });

  it('a thrown error: failed and due after the jittered backoff, dead when out of attempts, dead at once when malformed', () => {
    expect(failure(1, new Error('boom'))).toMatchObject({ id: 70, eventId: 7, attempts: 1, status: 'failed', error: 'boom', runAfter: NOW + 500 });
    expect(failure(2, new Error('boom'), 0.999)).toMatchObject({ status: 'failed', runAfter: NOW + 1999 });
    expect(failure(3, new Error('boom'))).toMatchObject({ attempts: 3, status: 'dead', error: 'boom (gave up after 3 attempts)' });
    expect(failure(3, new Error('boom'), 0, true)).toMatchObject({ status: 'parked' });
    expect(failure(1, new MalformedPayloadError('no id'))).toMatchObject({ attempts: 1, status: 'dead', error: 'no id' });
    const long = failure(1, new Error('x'.repeat(5000)));
    expect(long.error).toHaveLength(MAX_ERROR_CHARS);
    expect(failure(1, 'a string')).toMatchObject({ status: 'failed', error: 'a string', stack: undefined });
  });

  it("keeps the error's stack: the project's own frames first, Node's internals dropped, bounded", () => {
    const error = new Error('boom');
    error.stack = [
      'Error: boom',
      '    at Object.run (/app/node_modules/hookrun/dist/inbox/handler-run.js:40:10)',
      '    at charge (/app/node_modules/stripe/lib/client.js:12:3)',
      '    at run (/app/handlers/sync-crm.ts:14:11)',
      '    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)',
    ].join('\n');
    expect(stackOf(error)!.split('\n')).toEqual([
      'at run (/app/handlers/sync-crm.ts:14:11)',
      'at charge (/app/node_modules/stripe/lib/client.js:12:3)',
      'at Object.run (/app/node_modules/hookrun/dist/inbox/handler-run.js:40:10)',
    ]);
    expect(failure(1, error).stack).toBe(stackOf(error));
    const deep = new Error('deep');
    deep.stack = ['Error: deep', ...Array.from({ length: 50 }, (_, i) => `    at f${i} (/app/handlers/deep.ts:${i}:1)`)].join('\n');
    expect(stackOf(deep)!.split('\n')).toHaveLength(12);
  });
});
