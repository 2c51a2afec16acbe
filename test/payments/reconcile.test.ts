import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EventWriter } from '../../src/db/event-writer.js';
import { stripeMirrorHandlers } from '../../src/inbox/handlers/stripe-mirror.js';
import { parseReconcileSince, reconcilePayments, RECONCILED_PAYMENT_TYPES } from '../../src/payments-api/reconcile.js';
import { createStripeApi } from '../../src/payments-api/stripe-client.js';
import { loadJobs } from '../../src/cron/registry.js';
import { createToolsApp } from '../tools/tools-app.js';
import { SECRETS } from '../helpers/config.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { FakeStripeApi, TEST_STRIPE_KEY } from '../helpers/fake-stripe-api.js';
import { drain, stripeEvent, stripeSubscription, testWorker } from '../inbox/fixtures.js';
import { createHarness } from '../cron/support.js';

const NOW = Date.UTC(2026, 10, 23, 12);
const HOUR = 3_600_000;

/** `count` subscription events, one an hour going back from `NOW - startHoursAgo`, each about its own subscription. */
function accountEvents(count: number, startHoursAgo = 1) {
  return Array.from({ length: count }, (_, i) => {
    const created = Math.floor((NOW - (startHoursAgo + i) * HOUR) / 1000);
    return { ...stripeEvent('customer.subscription.updated', created, stripeSubscription(`sub_r${i}`, 'active')), id: `evt_r${String(i).padStart(4, '0')}` };
  });
}

describe('parseReconcileSince', () => {
  it('reads durations and ISO dates, and explains what it refuses', () => {
    expect(parseReconcileSince('3d', NOW).getTime()).toBe(NOW - 72 * HOUR);
    expect(parseReconcileSince('90m', NOW).getTime()).toBe(NOW - 90 * 60_000);
    expect(parseReconcileSince('1w', NOW).getTime()).toBe(NOW - 168 * HOUR);
    expect(parseReconcileSince('2026-11-20T08:00:00Z', NOW).toISOString()).toBe('2026-11-20T08:00:00.000Z');
    expect(() => parseReconcileSince('yesterday', NOW)).toThrow(
      /--since "yesterday" is neither a duration back from now \(like 90m, 12h, 3d or 1w\) nor a date or time: write an ISO 8601 date/,
    );
    expect(() => parseReconcileSince('31d', NOW)).toThrow(/Stripe keeps events for 30 days/);
    expect(() => parseReconcileSince('2027-01-01', NOW)).toThrow(/in the future/);
  });

  it('lists exactly the event types the payments handlers act on', () => {
    expect([...RECONCILED_PAYMENT_TYPES].sort()).toEqual(Object.keys(stripeMirrorHandlers).sort());
  });
});

describe.each(databaseKinds())('reconcile payments on $name', (kind) => {
  const testDb = useTestDatabase(kind);
  const api = new FakeStripeApi();
  let stripe: ReturnType<typeof createStripeApi>;
  let base: string;
  beforeAll(async () => {
    base = await api.start();
    stripe = createStripeApi({ secretKey: TEST_STRIPE_KEY, apiBase: new URL(base) });
  });
  afterAll(() => api.close());
  beforeEach(() => api.reset());
  const keys = async () =>
    (await testDb.db.query<{ key: string }>(`SELECT key FROM hookrun.webhook_events WHERE source = 'payments' ORDER BY key`)).map((r) => r.key);

  it('stores exactly the missing events of the window (paged past 100), and a second run adds nothing', async () => {
    const events = accountEvents(260); // 260 hours back: the last 72 h hold 72 of them
    api.events.push(...events, { ...stripeEvent('charge.succeeded', Math.floor(NOW / 1000) - 60, {}), id: 'evt_unhandled' });
    const writer = new EventWriter(testDb.db);
    const inWindow = events.filter((e) => e.created * 1000 >= NOW - 72 * HOUR);
    // What was delivered before the outage: every third event of the window is already stored.
    for (const e of inWindow.filter((_, i) => i % 3 === 0)) await writer.write({ source: 'payments', key: e.id, type: e.type, payloadJson: JSON.stringify(e) });
    const alreadyStored = Math.ceil(inWindow.length / 3);

    const since = parseReconcileSince('3d', NOW);
    const first = await reconcilePayments({ api: stripe, writer, since });
    expect(first).toMatchObject({ since: since.toISOString(), found: inWindow.length, added: inWindow.length - alreadyStored, alreadyStored });
    expect(await keys()).toEqual(inWindow.map((e) => e.id).sort());

    const second = await reconcilePayments({ api: stripe, writer, since });
    expect(second).toMatchObject({ found: inWindow.length, added: 0, alreadyStored: inWindow.length });
    expect(await keys()).toHaveLength(inWindow.length);

    const wide = await reconcilePayments({ api: stripe, writer, since: parseReconcileSince('12d', NOW) });
    expect(wide.added).toBe(events.filter((e) => e.created * 1000 >= NOW - 288 * HOUR).length - inWindow.length);
    expect(api.requests.some((r) => r.includes('starting_after='))).toBe(true);
    expect(api.requests.every((r) => !r.includes('charge.succeeded'))).toBe(true);
    expect(await keys()).not.toContain('evt_unhandled');
  });

  it('the recovered events are processed like delivered ones', async () => {
    api.events.push(...accountEvents(5));
    await reconcilePayments({ api: stripe, writer: new EventWriter(testDb.db), since: parseReconcileSince('1d', NOW) });
    await drain(testWorker(testDb.db).worker);
    expect(await testDb.db.query(`SELECT count(*)::int AS n FROM hookrun.subscriptions WHERE status = 'active'`)).toEqual([{ n: 5 }]);
  });

  it('POST /api/payments/reconcile: 503 not_configured without STRIPE_SECRET_KEY, 400 for a bad since, the summary with it', async () => {
    api.events.push(...accountEvents(3));
    const auth = { authorization: `Bearer ${SECRETS.admin}`, 'content-type': 'application/json' };
    const post = async (env: Record<string, string | undefined>, since: string) => {
      const tools = await createToolsApp(testDb.db, env, undefined);
      tools.clock.set(NOW);
      return tools.app.request('/api/payments/reconcile', { method: 'POST', headers: auth, body: JSON.stringify({ since }) });
    };
    const closed = await post({}, '3d');
    expect([closed.status, (await closed.json()).error.code]).toEqual([503, 'not_configured']);
    const withKey = { STRIPE_SECRET_KEY: TEST_STRIPE_KEY, STRIPE_API_BASE: base };
    const bad = await post(withKey, 'last tuesday');
    expect([bad.status, (await bad.json()).error.code]).toEqual([400, 'bad_request']);
    const ok = await post(withKey, '3d');
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ found: 3, added: 3, alreadyStored: 0 });
  });

  it('the reconcile-payments job stores what is missing; without STRIPE_SECRET_KEY its run fails and says why', async () => {
    api.events.push(...accountEvents(4));
    const jobs = new Map([...(await loadJobs())].filter(([name]) => name === 'reconcile-payments'));
    const harness = await createHarness(testDb.db, { jobs, env: { STRIPE_SECRET_KEY: TEST_STRIPE_KEY, STRIPE_API_BASE: base } });
    harness.clock.set(NOW);
    expect(await harness.cron.runJob('reconcile-payments', 'cli')).toMatchObject({ status: 'succeeded' });
    expect(await keys()).toHaveLength(4);
    const unconfigured = await createHarness(testDb.db, { jobs });
    const failed = await unconfigured.cron.runJob('reconcile-payments', 'cli');
    expect(failed).toMatchObject({ status: 'failed' });
    expect(failed.error).toMatch(/STRIPE_SECRET_KEY is not set/);
  });
});
