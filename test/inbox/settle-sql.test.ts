import { describe, expect, it } from 'vitest';
import type { DeliveryOutcome } from '../../src/deliveries/claimed.js';
import { settleDeliveries } from '../../src/deliveries/settle-sql.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { storeEvent } from './fixtures.js';

const NOW = Date.parse('2026-11-29T12:00:00Z');

describe.each(databaseKinds())('settling deliveries on $name', (kind) => {
  const testDb = useTestDatabase(kind);

  /** An event with one running delivery per handler (shared when there are several), claimed `attempts` times. */
  async function runningEvent(handlers: string[], attempts = 2): Promise<{ eventId: number; ids: number[] }> {
    const eventId = await storeEvent(testDb.db, 'test', 'thing.done', { n: 1 });
    const ids: number[] = [];
    for (const handler of handlers) {
      const [row] = await testDb.db.query<{ id: number | string }>(
        `INSERT INTO hookrun.handler_deliveries (event_id, handler, status, attempts, locked_until, shared)
         VALUES ($1, $2, 'running', $3, now(), $4) RETURNING id`,
        [eventId, handler, attempts, handlers.length > 1],
      );
      ids.push(Number(row!.id));
    }
    return { eventId, ids };
  }

  const processed = (id: number, eventId: number, attempts = 2): DeliveryOutcome => ({
    id,
    eventId,
    attempts,
    status: 'processed',
    startedAt: NOW - 7,
    durationMs: 7,
  });

  /** What a settle writes to a delivery; its due time and rank (set at insert, per row) as whether they are what they were. */
  const deliveryRow = async (id: number, before?: { run_after: unknown; rank: unknown }) => {
    const [row] = await testDb.db.query<Record<string, unknown>>(
      `SELECT status, last_error, locked_until, attempts, run_after, rank, finished_at, duration_ms FROM hookrun.handler_deliveries WHERE id = $1`,
      [id],
    );
    const { run_after, rank, ...rest } = row!;
    return before ? { ...rest, dueAndRankKept: String(run_after) === String(before.run_after) && String(rank) === String(before.rank) } : { run_after, rank };
  };
  const eventRow = async (id: number) =>
    (await testDb.db.query(`SELECT status, attempts, last_error, processed_at FROM hookrun.webhook_events WHERE id = $1`, [id]))[0];

  const nextAttemptAt = async (id: number) =>
    (await testDb.db.query<{ next_attempt_at: unknown }>(`SELECT next_attempt_at FROM hookrun.webhook_events WHERE id = $1`, [id]))[0]!.next_attempt_at;

  it('one processed delivery settled alone writes what the same outcome settled in a batch writes, to the delivery and its event', async () => {
    const alone = await runningEvent(['h']);
    const batched = await runningEvent(['h']);
    const other = await runningEvent(['h']);
    const db = testDb.db;
    const aloneDue = await nextAttemptAt(alone.eventId);
    const aloneBefore = (await deliveryRow(alone.ids[0]!)) as { run_after: unknown; rank: unknown };
    const batchedBefore = (await deliveryRow(batched.ids[0]!)) as { run_after: unknown; rank: unknown };
    expect(await settleDeliveries(db, [processed(alone.ids[0]!, alone.eventId)], NOW)).toEqual([{ id: alone.ids[0], eventId: alone.eventId }]);
    expect(await settleDeliveries(db, [processed(batched.ids[0]!, batched.eventId), processed(other.ids[0]!, other.eventId)], NOW)).toHaveLength(2);

    expect(await deliveryRow(alone.ids[0]!, aloneBefore)).toEqual(await deliveryRow(batched.ids[0]!, batchedBefore));
    expect(await eventRow(alone.eventId)).toEqual(await eventRow(batched.eventId));
    expect(await eventRow(alone.eventId)).toMatchObject({ status: 'processed', attempts: 2, last_error: null });
    expect(await deliveryRow(alone.ids[0]!, aloneBefore)).toMatchObject({ status: 'processed', locked_until: null, duration_ms: 7, dueAndRankKept: true });
    expect(await db.query('SELECT * FROM hookrun.event_attempts')).toEqual([]);
    expect(String(await nextAttemptAt(alone.eventId))).toBe(String(aloneDue));
  });

  it('a delivery claimed again meanwhile is not settled by the older attempt, alone or in a batch', async () => {
    const { eventId, ids } = await runningEvent(['h'], 3);
    const db = testDb.db;
    expect(await settleDeliveries(db, [processed(ids[0]!, eventId, 2)], NOW)).toEqual([]);
    expect(await settleDeliveries(db, [processed(ids[0]!, eventId, 2), processed(ids[0]!, eventId, 1)], NOW)).toEqual([]);
    expect(await deliveryRow(ids[0]!, { run_after: null, rank: null })).toMatchObject({ status: 'running', attempts: 3 });
    expect(await eventRow(eventId)).toMatchObject({ status: 'pending' });
  });

  it("an event's delivery settled alone while another of its deliveries runs leaves the event pending, then processed with the last", async () => {
    const { eventId, ids } = await runningEvent(['a', 'b']);
    const db = testDb.db;
    await settleDeliveries(db, [processed(ids[0]!, eventId)], NOW);
    expect(await eventRow(eventId)).toMatchObject({ status: 'pending', processed_at: null });
    await settleDeliveries(db, [processed(ids[1]!, eventId)], NOW + 1000);
    expect(await eventRow(eventId)).toMatchObject({ status: 'processed', attempts: 2, last_error: null, processed_at: new Date(NOW + 1000) });
  });
});
