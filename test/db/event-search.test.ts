import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEvents, type ListEventsQuery } from '../../src/db/events.js';
import { parsePayloadMatch } from '../../src/db/event-filter.js';
import { createPostgresDatabase, type TestDatabase } from '../helpers/db.js';

/** Every page of a listing, following the cursor: the ids in order. */
async function allIds(testDb: TestDatabase, query: ListEventsQuery): Promise<number[]> {
  const ids: number[] = [];
  let before: number | undefined;
  for (let pages = 0; pages < 100; pages++) {
    const page = await listEvents(testDb.db, { ...query, before });
    ids.push(...page.events.map((e) => e.id));
    if (page.nextCursor === undefined) return ids;
    before = page.nextCursor;
  }
  throw new Error('more than 100 pages');
}

// 30,000 events: more than the newest ids an equals search walks before it asks the payload index.
describe('payload equals search across the newest window and the payload index (PostgreSQL)', () => {
  let testDb: TestDatabase;
  beforeAll(async () => {
    testDb = await createPostgresDatabase();
    await testDb.db.query(`INSERT INTO hookrun.webhook_events (source, key, type, payload, status)
      SELECT 'payments', 'evt_' || n, 'invoice.paid',
        jsonb_build_object('data', jsonb_build_object('object', jsonb_build_object('customer', 'cus_' || (n % 1000), 'rare', CASE WHEN n % 7919 = 0 THEN 'yes' ELSE 'no' END, 'amount', n % 3))),
        'processed'
      FROM generate_series(1, 30000) AS n`);
  }, 60_000);
  afterAll(() => testDb?.close());

  const expected = async (sql: string) =>
    (await testDb.db.query<{ id: string }>(`SELECT id FROM hookrun.webhook_events WHERE ${sql} ORDER BY id DESC`)).map((r) => Number(r.id));

  it('a rare value (matches in and below the window) comes back whole, newest first, each once', async () => {
    const ids = await allIds(testDb, { where: parsePayloadMatch('data.object.rare = yes') });
    expect(ids).toEqual(await expected(`payload->'data'->'object'->>'rare' = 'yes'`));
    expect(ids.length).toBe(3);
  });

  it('a value that fills pages from the window pages on into the older ids through the index', async () => {
    const ids = await allIds(testDb, { where: parsePayloadMatch('data.object.customer = cus_7'), limit: 7 });
    expect(ids).toEqual(await expected(`payload->'data'->'object'->>'customer' = 'cus_7'`));
    expect(ids.length).toBe(30);
    expect(new Set(ids).size).toBe(30);
  });

  it('a common number value fills the first page from the newest ids', async () => {
    const page = await listEvents(testDb.db, { where: parsePayloadMatch('data.object.amount = 2'), limit: 50 });
    expect(page.events.map((e) => e.id)).toEqual((await expected(`payload->'data'->'object'->>'amount' = '2'`)).slice(0, 50));
    expect(page.nextCursor).toBe(page.events[49]!.id);
  });

  it('keeps the other filters in both steps', async () => {
    await testDb.db.query(`UPDATE hookrun.webhook_events SET status = 'dead' WHERE key IN ('evt_7', 'evt_29007')`);
    const ids = await allIds(testDb, { where: parsePayloadMatch('data.object.customer = cus_7'), status: 'dead' });
    expect(ids).toEqual(await expected(`key IN ('evt_7', 'evt_29007')`));
  });
});
