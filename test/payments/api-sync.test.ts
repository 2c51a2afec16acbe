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
    (await testDb.db.query<Record<string, unknown>>(`SELECT id, customer_id, status, price_id, current_period_end, cancel_at_period_end FROM hookrun.subscriptions`))[0];
  const statuses = async () => (await testDb.db.query<{ status: string }>('SELECT status FROM hookrun.webhook_events ORDER BY id')).map((r) => r.status);

  it('same-second events in any order leave the mirror equal to what the API returns', async () => {
    api.subscriptions.set('sub_1', stripeSubscription('sub_1', 'active', { price: 'price_pro', periodEnd: 1_900_000_000, cancelAtPeriodEnd: true }));
    // Three events of one second, delivered newest-first: each says something stale; none is trusted.
    await storeEvent(testDb.db, 'payments', 'customer.subscription.updated', stripeEvent('customer.subscription.updated', SECOND, stripeSubscription('sub_1', 'past_due')));
    await storeEvent(testDb.db, 'payments', 'invoice.payment_failed', stripeEvent('invoice.payment_failed', SECOND, { customer: 'cus_1', subscription: 'sub_1' }));
    await storeEvent(testDb.db, 'payments', 'customer.subscription.created', stripeEvent('customer.subscription.created', SECOND, stripeSubscription('sub_1', 'incomplete')));
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
    expect((await testDb.db.query('SELECT id, email, deleted_at FROM hookrun.customers'))).toEqual([{ id: 'cus_1', email: 'api@example.com', deleted_at: null }]);
    expect(api.requests.filter((r) => r.startsWith('GET /v1/subscriptions/sub_1'))).toHaveLength(3);
  });

  it('reversed events: a late created after a canceled still leaves what the API says', async () => {
    api.subscriptions.set('sub_1', stripeSubscription('sub_1', 'canceled'));
    await storeEvent(testDb.db, 'payments', 'customer.subscription.deleted', stripeEvent('customer.subscription.deleted', SECOND + 5, stripeSubscription('sub_1', 'canceled')));
    await storeEvent(testDb.db, 'payments', 'customer.subscription.created', stripeEvent('customer.subscription.created', SECOND, stripeSubscription('sub_1', 'active')));
    await run(testDb.db);
    expect(await subscriptionRow()).toMatchObject({ id: 'sub_1', status: 'canceled' });
  });

  it('a checkout links the customer to our user and takes the email from the API', async () => {
    api.customers.set('cus_9', { id: 'cus_9', object: 'customer', email: 'now@example.com' });
    const session = { id: 'cs_1', object: 'checkout.session', customer: 'cus_9', customer_details: { email: 'then@example.com' }, client_reference_id: 'user_9' };
    await storeEvent(testDb.db, 'payments', 'checkout.session.completed', stripeEvent('checkout.session.completed', SECOND, session));
    await run(testDb.db);
    expect(await testDb.db.query('SELECT id, email, user_id FROM hookrun.customers')).toEqual([{ id: 'cus_9', email: 'now@example.com', user_id: 'user_9' }]);
  });

  it('a 404 is applied as a delete: the subscription is canceled, a deleted customer is marked deleted', async () => {
    api.customers.set('cus_1', 'deleted');
    await storeEvent(testDb.db, 'payments', 'customer.subscription.updated', stripeEvent('customer.subscription.updated', SECOND, stripeSubscription('sub_gone', 'active')));
    await storeEvent(testDb.db, 'payments', 'invoice.paid', stripeEvent('invoice.paid', SECOND, { customer: 'cus_1', customer_email: 'x@example.com' }));
    await run(testDb.db);
    expect(await statuses()).toEqual(['processed', 'processed']);
    expect(await subscriptionRow()).toMatchObject({ id: 'sub_gone', customer_id: 'cus_1', status: 'canceled' });
    const [customer] = await testDb.db.query<{ deleted_at: Date | null }>('SELECT deleted_at FROM hookrun.customers');
    expect(customer!.deleted_at).toBeInstanceOf(Date);
  });

  it('a failed fetch is retried like any handler error, then applied', async () => {
    api.subscriptions.set('sub_1', stripeSubscription('sub_1', 'trialing'));
    api.failNext = 2; // stripe-node retries once by itself; the worker's retry gets the third answer
    const id = await storeEvent(testDb.db, 'payments', 'customer.subscription.updated', stripeEvent('customer.subscription.updated', SECOND, stripeSubscription('sub_1', 'active')));
    const handlers = createDefaultHandlers({ stripe: createStripeApi({ secretKey: TEST_STRIPE_KEY, apiBase: new URL(base) }) });
    const { worker, clock } = testWorker(testDb.db, { handlers });
    await worker.runOnce();
    const [failed] = await testDb.db.query<{ status: string; attempts: number; last_error: string }>('SELECT status, attempts, last_error FROM hookrun.webhook_events WHERE id = $1', [id]);
    expect(failed).toMatchObject({ status: 'failed', attempts: 1 });
    expect(failed!.last_error).toMatch(/fake API/);
    clock.advance(3_600_000);
    await drain(worker);
    expect(await statuses()).toEqual(['processed']);
    expect(await subscriptionRow()).toMatchObject({ status: 'trialing' });
  });
});
