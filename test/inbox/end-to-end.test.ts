import { describe, expect, it } from 'vitest';
import { SEED_SOURCES } from '../../src/config/config.js';
import { SAMPLE_TYPES, buildSample } from '../../src/webhooks/samples.js';
import { createTestApp } from '../helpers/app.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { checkoutCompleted, clerkUserCreated, type Delivery } from '../helpers/signed-deliveries.js';
import { drain, storeEvent, testWorker, waitFor } from './fixtures.js';

describe.each(databaseKinds())('receive → process on $name', (kind) => {
  const testDb = useTestDatabase(kind);

  it('every sample `hookrun send` builds is processed by a shipped handler (not ignored, not dead)', async () => {
    const stored: Array<{ id: number; what: string }> = [];
    // The senders that ship handlers (the seed's three); GitHub, Shopify, Resend and Twilio events are stored and ignored until you add one.
    for (const source of SEED_SOURCES) {
      for (const type of SAMPLE_TYPES[source]) {
        const sample = buildSample(source, type);
        stored.push({ id: await storeEvent(testDb.db, source, String(sample.type), sample), what: `${source} ${type}` });
      }
    }
    await drain(testWorker(testDb.db).worker);
    const rows = await testDb.db.query<{ id: number; status: string; last_error: string | null }>(
      'SELECT id, status, last_error FROM hookrun.webhook_events ORDER BY id',
    );
    const outcomes = rows.map((row) => `${stored.find((s) => s.id === Number(row.id))!.what}: ${row.status}${row.last_error ? ` (${row.last_error})` : ''}`);
    expect(outcomes).toEqual(stored.map((s) => `${s.what}: processed`));
  });

  it('a signed Clerk user.created and Stripe checkout posted to the app reach the mirror without a poll', async () => {
    const t = createTestApp(testDb.db);
    const { worker } = testWorker(testDb.db, { options: { pollIntervalMs: 60_000 } });
    const post = (d: Delivery) => t.app.request(`/webhooks/${d.source}`, { method: 'POST', body: d.body, headers: d.sign(t.clock.now()) });
    worker.start();
    try {
      expect((await post(clerkUserCreated('e2e'))).status).toBe(200);
      expect((await post(checkoutCompleted('e2e'))).status).toBe(200);
      await waitFor(async () => (await testDb.db.query(`SELECT 1 FROM hookrun.customers WHERE id = 'cus_e2e' AND user_id = 'user_e2e'`)).length === 1);
      await waitFor(async () => (await testDb.db.query(`SELECT 1 FROM hookrun.users WHERE id = 'user_e2e' AND email = 'e2e@example.com'`)).length === 1);
    } finally {
      await worker.stop();
    }
  });
});
