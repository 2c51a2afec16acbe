import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/client.js';
import type { Database } from '../../src/db/database.js';
import { createPostgresDatabase, type TestDatabase } from '../helpers/db.js';
import { pollUntil } from '../helpers/spawn-hookrun.js';

describe.skipIf(!process.env.TEST_DATABASE_URL)('LISTEN on PostgreSQL survives its connection being killed', () => {
  let handle: TestDatabase;
  let db: Database;
  afterAll(async () => {
    await db?.close();
    await handle?.close();
  });

  it('is reported, opened again with backoff, wakes the listener once, and delivers new notifications', { timeout: 30_000 }, async () => {
    handle = await createPostgresDatabase();
    const lost: Error[] = [];
    db = await openDatabase({ databaseUrl: handle.url!, onListenLost: (error) => lost.push(error) });
    const payloads: string[] = [];
    const stop = await db.listen('hookrun_reconnect_test', (payload) => payloads.push(payload));
    try {
      await db.query(`SELECT pg_notify('hookrun_reconnect_test', 'before')`);
      await pollUntil('the first notification', 5_000, async () => (payloads.includes('before') ? true : undefined));
      const [killed] = await db.query<{ n: number }>(
        `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'`,
      );
      expect(killed!.n).toBe(1);
      await pollUntil('the loss reported', 5_000, async () => (lost.length > 0 ? true : undefined));
      await pollUntil('the wake-up after the reconnect', 10_000, async () => (payloads.includes('') ? true : undefined));
      await db.query(`SELECT pg_notify('hookrun_reconnect_test', 'after')`);
      await pollUntil('a notification after the reconnect', 5_000, async () => (payloads.includes('after') ? true : undefined));
    } finally {
      await stop();
    }
  });
});
