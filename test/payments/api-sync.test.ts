import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { createDefaultHandlers } from '../../src/inbox/handlers/defaults.js';
import { createStripeApi } from '../../src/payments-api/stripe-client.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { FakeStripeApi, TEST_STRIPE_KEY } from '../helpers/fake-stripe-api.js';
import { drain, storeEvent, stripeEvent, stripeSubscription, testWorker } from '../inbox/fixtures.js';

const SECOND = 1_770_000_000;

describe.each(databaseKinds())('payments synced from the Stripe API (STRIPE_SECRET_KEY) on $name', (kind) => {
  const testDb = useTestDatabase(kind);
  const api = new FakeStripeApi();
  let base: string;
  beforeAll(async () => {
    base = await api.start();
  });
  afterAll(() => api.close());
  beforeEach(() => api.reset());

  const run = async (db: Database) => {
    const handlers = createDefaultHandlers({ stripe: createStripeApi({ secretKey: TEST_STRIPE_KEY, apiBase: new URL(base) }) });
    await drain(testWorker(db, { handlers }).worker);
  };
  const subscriptionRow = async () =>
    (
      await testDb.db.query<Record<string, unknown>>(
        `SELECT id, customer_id, status, price_id, current_period_end, cancel_at_period_end FROM hookrun.subscriptions`,
      )
    )[0];
  const statuses = async () => (await testDb.db.query<{ status: string }>('SELECT status FROM hookrun.webhook_events ORDER BY id')).map((r) => r.status);

  it('same-second events in any order leave the mirror equal to what the API returns', async () => {
    api.subscriptions.set('sub_1', stripeSubscription('sub_1', 'active', { price: 'price_pro', periodEnd: 1_900_000_000, cancelAtPeriodEnd: true }));
    // Three events of one second, delivered newest-first: each says something stale; none is trusted.
    await storeEvent(
      testDb.db,
      'payments',
      'customer.subscription.updated',
      stripeEvent('customer.subscription.updated', SECOND, stripeSubscription('sub_1', 'past_due')),
    );
    await storeEvent(
      testDb.db,
      'payments',
      'invoice.payment_failed',
      stripeEvent('invoice.payment_failed', SECOND, { customer: 'cus_1', subscription: 'sub_1' }),
    );
    await storeEvent(
      testDb.db,
      'payments',
      'customer.subscription.created',
      stripeEvent('customer.subscription.created', SECOND, stripeSubscription('sub_1', 'incomplete')),
    );
    api.customers.set('cus_1', { id: 'cus_1', object: 'customer', email: 'api@example.com' });
    await run(testDb.db);
    expect(await statuses()).toEqual(['processed', 'processed', 'processed']);
    expect(await subscriptionRow()).toEqual({
      id: 'sub_1',
      customer_id: 'cus_1',
      status: 'active',
      price_id: 'price_pro',
      current_period_end: new Date(1_900_000_000 * 1000),
      cancel_at_period_end: true,
    });
    expect(await testDb.db.query('SELECT id, email, deleted_at FROM hookrun.customers')).toEqual([{ id: 'cus_1', email: 'api@example.com', deleted_at: null }]);
    // One fetch per event (none trusts its payload); stripe-node may repeat a GET whose connection dropped (maxNetworkRetries 1).
    const fetches = api.requests.filter((r) => r.startsWith('GET /v1/subscriptions/sub_1')).length;
    expect(fetches).toBeGreaterThanOrEqual(3);
    expect(fetches).toBeLessThanOrEqual(6);
  });

  it('reversed events: a late created after a canceled still leaves what the API says', async () => {
    api.subscriptions.set('sub_1', stripeSubscription('sub_1', 'canceled'));
    await storeEvent(
      testDb.db,
      'payments',
      'customer.subscription.deleted',
      stripeEvent('customer.subscription.deleted', SECOND + 5, stripeSubscription('sub_1', 'canceled')),
    );
    await storeEvent(
      testDb.db,
      'payments',
      'customer.subscription.created',
      stripeEvent('customer.subscription.created', SECOND, stripeSubscription('sub_1', 'active')),
    );
    await run(testDb.db);
    expect(await subscriptionRow()).toMatchObject({ id: 'sub_1', status: 'canceled' });
  });

  it('a checkout links the customer to our user and takes the email from the API', async () => {
    api.customers.set('cus_9', { id: 'cus_9', object: 'customer', email: 'now@example.com' });
    const session = {
      id: 'cs_1',
      object: 'checkout.session',
      customer: 'cus_9',
      customer_details: { email: 'then@example.com' },
      client_reference_id: 'user_9',
    };
    await storeEvent(testDb.db, 'payments', 'checkout.session.completed', stripeEvent('checkout.session.completed', SECOND, session));
    await run(testDb.db);
    expect(await testDb.db.query('SELECT id, email, user_id FROM hookrun.customers')).toEqual([{ id: 'cus_9', email: 'now@example.com', user_id: 'user_9' }]);
  });

  it('a 404 is applied as a delete: the subscription is canceled, a deleted customer is marked deleted', async () => {
    api.customers.set('cus_1', 'deleted');
    await storeEvent(
      testDb.db,
      'payments',
      'customer.subscription.updated',
      stripeEvent('customer.subscription.updated', SECOND, stripeSubscription('sub_gone', 'active')),
    );
    await storeEvent(testDb.db, 'payments', 'invoice.paid', stripeEvent('invoice.paid', SECOND, { customer: 'cus_1', customer_email: 'x@example.com' }));
    await run(testDb.db);
    expect(await statuses()).toEqual(['processed', 'processed']);
    expect(await subscriptionRow()).toMatchObject({ id: 'sub_gone', customer_id: 'cus_1', status: 'canceled' });
    const [customer] = await testDb.db.query<{ deleted_at: Date | null }>('SELECT deleted_at FROM hookrun.customers');
    expect(customer!.deleted_at).toBeInstanceOf(Date);
  });

  const lastError = async () =>
    (await testDb.db.query<{ status: string; last_error: string }>('SELECT status, last_error FROM hookrun.webhook_events ORDER BY id'))[0]!;
  const customerRow = async () => (await testDb.db.query<{ id: string; deleted_at: Date | null }>('SELECT id, deleted_at FROM hookrun.customers'))[0];

  it('a test key against a live event changes nothing: the event fails naming the mismatch, and is applied once the key is right', async () => {
    const live = { ...stripeEvent('invoice.paid', SECOND, { customer: 'cus_1', subscription: 'sub_1' }), livemode: true };
    await storeEvent(testDb.db, 'payments', 'invoice.paid', live);
    const { worker, clock } = testWorker(testDb.db, {
      handlers: createDefaultHandlers({ stripe: createStripeApi({ secretKey: TEST_STRIPE_KEY, apiBase: new URL(base) }) }),
    });
    await worker.runOnce();
    expect(await lastError()).toMatchObject({ status: 'failed', last_error: expect.stringContaining('STRIPE_SECRET_KEY is a test-mode key but event') });
    expect((await lastError()).last_error).toContain('live-mode');
    expect(await subscriptionRow()).toBeUndefined();
    expect(await customerRow()).toBeUndefined();
    expect(api.requests).toEqual([]); // the API was not even asked: its 404 would mean nothing
    // The key is fixed (here: the event's mode is the key's, the objects exist): applied on the retry.
    await testDb.db.query(`UPDATE hookrun.webhook_events SET payload = jsonb_set(payload::jsonb, '{livemode}', 'false')::json`);
    api.subscriptions.set('sub_1', stripeSubscription('sub_1', 'active'));
    api.customers.set('cus_1', { id: 'cus_1', object: 'customer', email: 'a@example.com' });
    clock.advance(3_600_000);
    await drain(worker);
    expect(await statuses()).toEqual(['processed']);
    expect(await subscriptionRow()).toMatchObject({ status: 'active' });
    expect(await customerRow()).toEqual({ id: 'cus_1', deleted_at: null });
  });

  it('a live key against a test event fails the same way, before any request', async () => {
    await storeEvent(
      testDb.db,
      'payments',
      'customer.subscription.updated',
      stripeEvent('customer.subscription.updated', SECOND, stripeSubscription('sub_1', 'active')),
    );
    const handlers = createDefaultHandlers({ stripe: createStripeApi({ secretKey: 'rk_live_hookrun_not_a_real_key', apiBase: new URL(base) }) });
    await testWorker(testDb.db, { handlers }).worker.runOnce();
    expect(await lastError()).toMatchObject({ status: 'failed', last_error: expect.stringContaining('is a live-mode key but event') });
    expect(await subscriptionRow()).toBeUndefined();
    expect(api.requests).toEqual([]);
  });

  it('a 404 that is not resource_missing (STRIPE_API_BASE points elsewhere) fails the event; nothing is canceled or deleted', async () => {
    api.notStripe = true;
    await storeEvent(testDb.db, 'payments', 'invoice.paid', stripeEvent('invoice.paid', SECOND, { customer: 'cus_1', subscription: 'sub_1' }));
    await testWorker(testDb.db, {
      handlers: createDefaultHandlers({ stripe: createStripeApi({ secretKey: TEST_STRIPE_KEY, apiBase: new URL(base) }) }),
    }).worker.runOnce();
    expect(await lastError()).toMatchObject({ status: 'failed', last_error: expect.stringContaining('STRIPE_API_BASE') });
    expect(await subscriptionRow()).toBeUndefined();
    expect(await customerRow()).toBeUndefined();
  });

  it('an event without livemode: a resource_missing 404 cannot be trusted, so the event fails', async () => {
    const { livemode: _, ...unknownMode } = stripeEvent('customer.subscription.updated', SECOND, stripeSubscription('sub_gone', 'active'));
    await storeEvent(testDb.db, 'payments', 'customer.subscription.updated', unknownMode);
    await run(testDb.db);
    expect(await lastError()).toMatchObject({ status: 'failed', last_error: expect.stringContaining('has no livemode') });
    expect(await subscriptionRow()).toBeUndefined();
  });

  it('a failed fetch is retried like any handler error, then applied', async () => {
    api.subscriptions.set('sub_1', stripeSubscription('sub_1', 'trialing'));
    api.failNext = 2; // stripe-node retries once by itself; the worker's retry gets the third answer
    const id = await storeEvent(
      testDb.db,
      'payments',
      'customer.subscription.updated',
      stripeEvent('customer.subscription.updated', SECOND, stripeSubscription('sub_1', 'active')),
    );
    const handlers = createDefaultHandlers({ stripe: createStripeApi({ secretKey: TEST_STRIPE_KEY, apiBase: new URL(base) }) });
    const { worker, clock } = testWorker(testDb.db, { handlers });
    await worker.runOnce();
    const [failed] = await testDb.db.query<{ status: string; attempts: number; last_error: string }>(
      'SELECT status, attempts, last_error FROM hookrun.webhook_events WHERE id = $1',
      [id],
    );
    expect(failed).toMatchObject({ status: 'failed', attempts: 1 });
    expect(failed!.last_error).toMatch(/fake API/);
    clock.advance(3_600_000);
    await drain(worker);
    expect(await statuses()).toEqual(['processed']);
    expect(await subscriptionRow()).toMatchObject({ status: 'trialing' });
  });
});
