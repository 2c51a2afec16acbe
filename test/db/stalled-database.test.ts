import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, countEvents } from '../helpers/app.js';
import { createPostgresDatabase, type TestDatabase } from '../helpers/db.js';
import { stripeDelivery } from '../helpers/signed-deliveries.js';
import { pollUntil } from '../helpers/spawn-hookrun.js';

/** Hold an ACCESS EXCLUSIVE lock on the inbox from another connection, as a stuck migration or a DBA would. */
async function lockInbox(url: string): Promise<() => Promise<void>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('BEGIN');
  await client.query('LOCK TABLE hookrun.webhook_events IN ACCESS EXCLUSIVE MODE');
  return async () => {
    await client.query('ROLLBACK');
    await client.end();
  };
}

describe.skipIf(!process.env.TEST_DATABASE_URL)('a locked or stalled PostgreSQL', () => {
  let handle: TestDatabase;
  beforeAll(async () => {
    handle = await createPostgresDatabase();
  });
  afterAll(() => handle?.close());

  it('/ready tells the truth: 503 while an insert would not commit (SELECT 1 still works), 200 after', async () => {
    const { app } = createTestApp(handle.db, { DB_TIMEOUT_MS: '300' });
    const ready = async () => ((await app.request('/ready')).status === 200 ? true : undefined);
    // 200 once a probe insert commits within DB_TIMEOUT_MS: polled, as one probe may miss it on a busy machine.
    await pollUntil('/ready 200 before the lock', 20_000, ready);
    const unlock = await lockInbox(handle.url!);
    try {
      expect(await handle.db.query('SELECT 1 AS ok')).toEqual([{ ok: 1 }]);
      const res = await app.request('/ready');
      expect(res.status).toBe(503);
      expect(((await res.json()) as { error: { message: string } }).error.message).toContain('would not be stored within 300 ms');
    } finally {
      await unlock();
    }
    await pollUntil('/ready 200 after the lock', 20_000, ready);
    expect(await countEvents(handle.db)).toBe(0); // the probe's row was rolled back
  });

  it('"503, not stored" is true: deliveries still queued when the receiver gives up are dropped, not written later', async () => {
    const { app, clock } = createTestApp(handle.db, { DB_TIMEOUT_MS: '300' });
    const unlock = await lockInbox(handle.url!);
    const deliveries = Array.from({ length: 5 }, (_, i) =>
      stripeDelivery({ id: `evt_stall_${i}`, object: 'event', type: 'invoice.paid', created: 1, data: { object: {} } }),
    );
    const post = (d: (typeof deliveries)[number]) =>
      Promise.resolve(app.request('/webhooks/payments', { method: 'POST', body: d.body, headers: d.sign(clock.now()) }));
    const first = post(deliveries[0]!);
    // Its INSERT is sent and waits on the lock; the next deliveries queue behind it in the writer.
    await pollUntil('the first insert waiting on the lock', 5_000, async () =>
      (
        await handle.db.query(
          `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid() AND query LIKE '%INSERT INTO hookrun.webhook_events%'`,
        )
      ).length > 0
        ? true
        : undefined,
    );
    const answers = [await first, ...(await Promise.all(deliveries.slice(1).map(post)))];
    const bodies = await Promise.all(
      answers.map(async (r) => ({ status: r.status, message: ((await r.json()) as { error: { message: string } }).error.message })),
    );
    await unlock();
    expect(bodies.every((b) => b.status === 503)).toBe(true);
    const notStored = bodies.filter((b) => b.message.includes('was not stored')).length;
    const unsure = bodies.filter((b) => b.message.includes('may have been stored')).length;
    expect(notStored + unsure).toBe(5);
    expect(unsure).toBeGreaterThanOrEqual(1); // the first INSERT was already sent and waited on the lock
    expect(notStored).toBeGreaterThanOrEqual(1); // the rest waited in the queue behind it
    // The INSERT that was sent commits once the lock is gone; the dropped deliveries never appear.
    await pollUntil('the sent insert committed', 5_000, async () => ((await countEvents(handle.db)) === unsure ? true : undefined));
    await handle.db.query('SELECT pg_sleep(0.2)');
    expect(await countEvents(handle.db)).toBe(unsure);
  });
});
