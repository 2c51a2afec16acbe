import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { listEvents } from '../../src/db/events.js';
import { createPostgresDatabase, databaseKinds, type TestDatabase } from '../helpers/db.js';

/**
 * Enough events that the planner reads a search or the newest page through the indexes: with the received-time
 * index or the search index dropped, the plans below read every event (a Seq Scan and a Sort), and the test fails.
 * 200,000 showed the same plans, but their seeding took 13 s alone and more than the hook's 2 minutes on a busy run.
 */
const MANY = 20_000;

/** Events `n` of a customer each (`cus_Qx81upgrade<n>`, `owner<n>@example.com`), received a minute apart, in id order. */
async function seed(db: Database, count: number): Promise<void> {
  await db.query(
    `INSERT INTO hookrun.webhook_events (source, key, type, payload, status, received_at)
     SELECT 'payments', 'evt_seed' || n, 'invoice.paid',
            json_build_object('data', json_build_object('object', json_build_object('customer', 'cus_Qx81upgrade' || n, 'customer_email', 'Owner' || n || '@Example.com'))),
            'processed', now() - interval '1 minute' * ($1 - n)
     FROM generate_series(1, $1::int) AS n`,
    [count],
  );
  await db.query(
    `INSERT INTO hookrun.event_search (value, event_id)
     SELECT v, e.id FROM hookrun.webhook_events e,
       LATERAL (VALUES (e.payload #>> '{data,object,customer}'), (lower(e.payload #>> '{data,object,customer_email}'))) AS s(v)`,
  );
}

/** A late event: stored last (the highest id), received an hour before the newest, as a reconcile or `events pull` stores one. */
async function storeLate(db: Database): Promise<number> {
  const [row] = await db.query<{ id: string | number }>(
    `INSERT INTO hookrun.webhook_events (source, key, type, payload, status, received_at)
     VALUES ('payments', 'evt_late', 'invoice.paid', '{"data":{"object":{"customer":"cus_LateArrival1"}}}', 'processed', now() - interval '1 hour') RETURNING id`,
  );
  await db.query(`INSERT INTO hookrun.event_search (value, event_id) VALUES ('cus_LateArrival1', $1)`, [row!.id]);
  return Number(row!.id);
}

describe.each(databaseKinds())('the events list on $name: newest received first, a pasted id or email found', (kind) => {
  let testDb: TestDatabase;
  let late = 0;
  beforeAll(async () => {
    testDb = await kind.create();
    await seed(testDb.db, 120);
    late = await storeLate(testDb.db);
  });
  afterAll(() => testDb?.close());

  it('sorts by received time, so an event stored late with an older time sorts among its own time, and pages on in that order', async () => {
    const first = await listEvents(testDb.db, { limit: 50 });
    expect(first.order).toBe('received');
    expect(first.events[0]!.key).toBe('evt_seed120');
    expect(first.events.map((e) => e.id)).not.toContain(late);
    const times = first.events.map((e) => new Date(e.receivedAt).getTime());
    expect(times).toEqual([...times].sort((a, b) => b - a));
    const second = await listEvents(testDb.db, { limit: 50, before: first.nextCursor });
    // Received an hour before the newest: after the 60 received since, before the ones received earlier.
    const keys = [...first.events, ...second.events].map((e) => e.key);
    expect(keys.indexOf('evt_late')).toBe(60);
    expect(new Set(keys).size).toBe(100);
  });

  it('finds the event whose payload holds a bare id, or an email in any case, typed in the search', async () => {
    expect((await listEvents(testDb.db, { search: 'cus_Qx81upgrade7' })).events.map((e) => e.key)).toEqual(['evt_seed7']);
    expect((await listEvents(testDb.db, { search: 'owner8@EXAMPLE.com' })).events.map((e) => e.key)).toEqual(['evt_seed8']);
    expect((await listEvents(testDb.db, { search: 'payload:cus_LateArrival1' })).events.map((e) => e.id)).toEqual([late]);
    // The exact key still finds its event, as before.
    expect((await listEvents(testDb.db, { search: 'evt_seed9' })).events.map((e) => e.key)).toEqual(['evt_seed9']);
  });
});

describe.skipIf(!process.env.TEST_DATABASE_URL)(`the events list's plans on PostgreSQL with ${MANY} events`, { timeout: 120_000 }, () => {
  let testDb: TestDatabase;
  const statements: Array<{ sql: string; params: unknown[] }> = [];
  /** The database, recording each statement the list sends. */
  let recording: Database;

  beforeAll(async () => {
    testDb = await createPostgresDatabase();
    await seed(testDb.db, MANY);
    await testDb.db.query('ANALYZE hookrun.webhook_events');
    await testDb.db.query('ANALYZE hookrun.event_search');
    recording = new Proxy(testDb.db, {
      get: (target, name) =>
        name === 'query'
          ? (sql: string, params: unknown[] = []) => (statements.push({ sql, params }), target.query(sql, params))
          : Reflect.get(target, name, target),
    });
  }, 120_000);
  afterAll(() => testDb?.close());

  /** The plan of the one statement `listEvents` sends for `search` (after `before`), as text. */
  async function planOf(search: string | undefined, before?: number): Promise<string> {
    statements.length = 0;
    await listEvents(recording, { search, before, limit: 50 });
    expect(statements).toHaveLength(1);
    const rows = await testDb.db.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${statements[0]!.sql}`, statements[0]!.params);
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  }

  it('reads a bare id, an email and the newest received page through indexes, never every event', async () => {
    // A search: its few events found by index lookups (then sorted, a handful of rows).
    for (const search of ['cus_Qx81upgrade123456', 'owner777@example.com', 'payload:cus_Qx81upgrade5']) {
      const plan = await planOf(search);
      expect(plan, `${search}:\n${plan}`).not.toMatch(/Seq Scan/);
    }
    // No search: the newest received page, and the next one, read in the index's order, without sorting every event.
    const page = await listEvents(testDb.db, { limit: 50 });
    for (const before of [undefined, page.nextCursor]) {
      const plan = await planOf(undefined, before);
      expect(plan, plan).not.toMatch(/Seq Scan|Sort\b/);
    }
  });
});
