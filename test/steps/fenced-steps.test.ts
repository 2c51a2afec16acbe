import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { DeliverySteps } from '../../src/steps/delivery-steps.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { storeEvent } from '../inbox/fixtures.js';

describe.each(databaseKinds())("a step's write is fenced by its delivery's claim on $name", (kind) => {
  const testDb = useTestDatabase(kind);

  /** A delivery claimed `attempts` times, running (as a claim leaves it). */
  async function runningDelivery(attempts: number): Promise<number> {
    const eventId = await storeEvent(testDb.db, 'test', 'thing.done', { n: 1 });
    const [row] = await testDb.db.query<{ id: number | string }>(
      `INSERT INTO hookrun.handler_deliveries (event_id, handler, status, attempts, locked_until) VALUES ($1, 'fenced', 'running', $2, now()) RETURNING id`,
      [eventId, attempts],
    );
    return Number(row!.id);
  }

  it("a worker whose lease ran out (the delivery claimed again) stores nothing, and the newer claim's step is kept", async () => {
    const { db } = testDb;
    const clock = new ManualClock();
    const deliveryId = await runningDelivery(1);
    const stale = new DeliverySteps({ db, clock, fence: { deliveryId, attempts: 1 } });
    // Its lease ran out and another worker claimed the delivery (attempt 2) while the first was still inside its step.
    await db.query('UPDATE hookrun.handler_deliveries SET attempts = 2 WHERE id = $1', [deliveryId]);
    await expect(stale.step('charge', () => 'ch_stale')).rejects.toThrow(/this attempt no longer holds the delivery/);
    expect(await db.query('SELECT * FROM hookrun.delivery_steps WHERE delivery_id = $1', [deliveryId])).toEqual([]);

    const current = new DeliverySteps({ db, clock, fence: { deliveryId, attempts: 2 } });
    expect(await current.step('charge', () => 'ch_current')).toBe('ch_current');
    // A third attempt gets the stored result without running the step.
    await db.query('UPDATE hookrun.handler_deliveries SET attempts = 3 WHERE id = $1', [deliveryId]);
    const next = new DeliverySteps({ db, clock, fence: { deliveryId, attempts: 3 } });
    expect(await next.step('charge', () => Promise.reject(new Error('must not run')))).toBe('ch_current');
  });

  it('two attempts racing on one step: the one that stores first wins, the other returns its result', async () => {
    const { db } = testDb;
    const clock = new ManualClock();
    const deliveryId = await runningDelivery(1);
    const first = new DeliverySteps({ db, clock, fence: { deliveryId, attempts: 1 } });
    const second = new DeliverySteps({ db, clock, fence: { deliveryId, attempts: 1 } });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const slow = second.step('account', async () => {
      await held;
      return { id: 'acct_second' };
    });
    expect(await first.step('account', () => ({ id: 'acct_first' }))).toEqual({ id: 'acct_first' });
    release();
    expect(await slow).toEqual({ id: 'acct_first' });
    const rows = await db.query<{ result: unknown }>('SELECT result FROM hookrun.delivery_steps WHERE delivery_id = $1', [deliveryId]);
    expect(rows).toEqual([{ result: { id: 'acct_first' } }]);
  });
});
