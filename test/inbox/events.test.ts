import { beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { countEventsByStatus } from '../../src/db/event-counts.js';
import { getEvent, listEvents } from '../../src/db/events.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { storeEvent } from './fixtures.js';

describe.each(databaseKinds())('event queries on $name', (kind) => {
  const testDb = useTestDatabase(kind);
  let db: Database;
  let ids: number[];
  beforeEach(async () => {
    db = testDb.db;
    ids = [];
    for (let n = 0; n < 7; n++) ids.push(await storeEvent(db, n % 2 ? 'auth' : 'payments', n < 5 ? 'a.created' : 'b.deleted', { n }, `key${n}`));
    await db.query(`UPDATE hookrun.webhook_events SET status = 'dead', last_error = 'boom' WHERE id = ANY($1::bigint[])`, [[ids[1], ids[2]]]);
  });

  it('lists newest first with filters and an id cursor', async () => {
    const first = await listEvents(db, { limit: 3 });
    expect(first.events.map((e) => e.id)).toEqual([ids[6], ids[5], ids[4]]);
    expect(first.nextCursor).toBe(ids[4]);
    const second = await listEvents(db, { limit: 3, before: first.nextCursor });
    expect(second.events.map((e) => e.id)).toEqual([ids[3], ids[2], ids[1]]);
    const last = await listEvents(db, { limit: 3, before: second.nextCursor });
    expect(last.events.map((e) => e.id)).toEqual([ids[0]]);
    expect(last.nextCursor).toBeUndefined();

    expect((await listEvents(db, { source: 'auth' })).events.map((e) => e.id)).toEqual([ids[5], ids[3], ids[1]]);
    expect((await listEvents(db, { status: 'dead' })).events.map((e) => e.id)).toEqual([ids[2], ids[1]]);
    expect((await listEvents(db, { type: 'b.deleted', source: 'payments' })).events.map((e) => e.id)).toEqual([ids[6]]);
    const [summary] = (await listEvents(db, { status: 'dead', limit: 1 })).events;
    expect(summary).toMatchObject({ source: 'payments', key: 'key2', type: 'a.created', status: 'dead', attempts: 0, lastError: 'boom', processedAt: null });
    expect(summary!.receivedAt).toBeInstanceOf(Date);
    expect(summary).not.toHaveProperty('payload');
  });

  it('gets one event with its payload', async () => {
    expect(await getEvent(db, ids[3]!)).toMatchObject({ id: ids[3], key: 'key3', payload: { n: 3 }, status: 'pending' });
    expect(await getEvent(db, 999_999)).toBeUndefined();
  });

  it('counts by status, every status present (GET /metrics samples this; test/tools/metrics-openapi covers the gauge)', async () => {
    expect(await countEventsByStatus(db)).toEqual({ pending: 5, processed: 0, ignored: 0, failed: 0, dead: 2 });
  });

  it('counts processed and ignored anew on every call on a small inbox, and reuse the count once there are 100,000 of them; the backlog and dead are always exact', async () => {
    expect((await countEventsByStatus(db)).pending).toBe(5);
    await db.query(`UPDATE hookrun.webhook_events SET status = 'processed' WHERE id = $1`, [ids[0]]);
    expect(await countEventsByStatus(db)).toMatchObject({ pending: 4, processed: 1 }); // a small count is never reused

    // The same database as a big inbox answers it: 250,000 processed events (their count is then reused for at least 1 s).
    let settledQueries = 0;
    const big = new Proxy(db, {
      get(target, property, receiver) {
        if (property !== 'query') return Reflect.get(target, property, receiver);
        return async (sql: string, params?: unknown[]) => {
          if (!JSON.stringify(params ?? []).includes('processed')) return target.query(sql, params);
          settledQueries++;
          const rows = (await target.query(sql, params)) as Array<{ status: string }>;
          return [...rows.filter((r) => r.status !== 'processed'), { status: 'processed', count: 250_000 }];
        };
      },
    });
    expect(await countEventsByStatus(big)).toMatchObject({ pending: 4, processed: 250_000, dead: 2 });
    await db.query(`UPDATE hookrun.webhook_events SET status = 'dead' WHERE id = $1`, [ids[4]]);
    expect(await countEventsByStatus(big)).toMatchObject({ pending: 3, processed: 250_000, dead: 3 });
    expect(settledQueries).toBe(1);
    expect(await countEventsByStatus(db)).toMatchObject({ pending: 3, processed: 1, dead: 3 });
  });
});
