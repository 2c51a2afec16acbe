import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EventWriter } from '../../src/db/event-writer.js';
import { upsertCustomer, upsertSubscription } from '../../src/db/payments-mirror.js';
import { createDefaultHandlers } from '../../src/inbox/handlers/defaults.js';
import { parseReconcileSince, reconcilePayments } from '../../src/payments-api/reconcile.js';
import { createStripeApi, StripeObjectMissing, type StripeApi } from '../../src/payments-api/stripe-client.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { FakeStripeApi, TEST_STRIPE_KEY } from '../helpers/fake-stripe-api.js';
import { drain, storeEvent, stripeEvent, stripeSubscription, testWorker } from '../inbox/fixtures.js';

const SECOND = 1_770_000_000;
const ACCOUNT = 'acct_1Connected';
const MINUTE = 60_000;

/** A snapshot event from a connected account: Stripe puts the account at the event's top level. */
const connectEvent = (type: string, object: Record<string, unknown>) => ({ ...stripeEvent(type, SECOND, object), account: ACCOUNT });

describe.each(databaseKinds())('Stripe Connect and objects found live again, synced from the API on $name', (kind) => {
  const testDb = useTestDatabase(kind);
  const fake = new FakeStripeApi();
  let api: StripeApi;
  beforeAll(async () => {
    api = createStripeApi({ secretKey: TEST_STRIPE_KEY, apiBase: new URL(await fake.start()) });
  });
  afterAll(() => fake.close());
  beforeEach(() => fake.reset());

  /** One worker (its clock moves between rounds, as time does between deliveries) over the synced payments handlers. */
  const setup = () => testWorker(testDb.db, { handlers: createDefaultHandlers({ stripe: api }) });
  const subscriptions = () => testDb.db.query('SELECT id, customer_id, status, price_id FROM hookrun.subscriptions');
  const customers = () =>
    testDb.db.query<{ id: string; email: string | null; deleted: boolean }>('SELECT id, email, deleted_at IS NOT NULL AS deleted FROM hookrun.customers');
  const statuses = async () => (await testDb.db.query<{ status: string }>('SELECT status FROM hookrun.webhook_events ORDER BY id')).map((r) => r.status);
  /** Objects of the connected account: the fake shows them only to requests that name it. */
  const connected = () => {
    fake.subscriptions.set('sub_c1', stripeSubscription('sub_c1', 'active', { price: 'price_pro' }));
    fake.customers.set('cus_1', { id: 'cus_1', object: 'customer', email: 'connected@example.com' });
    fake.owners.set('sub_c1', ACCOUNT).set('cus_1', ACCOUNT);
  };

  it("a Connect event's subscription and customer are fetched in its account (Stripe-Account), not canceled or deleted", async () => {
    connected();
    // The fake enforces Connect as Stripe does: without the account these objects do not exist.
    await expect(api.retrieveSubscription('sub_c1')).rejects.toBeInstanceOf(StripeObjectMissing);
    fake.requests.length = fake.accounts.length = 0;
    await storeEvent(
      testDb.db,
      'payments',
      'customer.subscription.updated',
      connectEvent('customer.subscription.updated', stripeSubscription('sub_c1', 'past_due')),
    );
    await storeEvent(testDb.db, 'payments', 'invoice.paid', connectEvent('invoice.paid', { customer: 'cus_1', subscription: 'sub_c1' }));
    await drain(setup().worker);
    expect(await statuses()).toEqual(['processed', 'processed']);
    expect(await subscriptions()).toEqual([{ id: 'sub_c1', customer_id: 'cus_1', status: 'active', price_id: 'price_pro' }]);
    expect(await customers()).toEqual([{ id: 'cus_1', email: 'connected@example.com', deleted: false }]);
    expect(fake.accounts.length).toBeGreaterThanOrEqual(3);
    expect(fake.accounts.every((account) => account === ACCOUNT)).toBe(true);
  });

  it("a thin event's follow-up fetches of the subscription and customer go in its context (Stripe-Context)", async () => {
    connected();
    fake.invoices.set('in_1', { id: 'in_1', object: 'invoice', customer: 'cus_1', parent: { subscription_details: { subscription: 'sub_c1' } } });
    fake.owners.set('in_1', ACCOUNT);
    const thin = {
      id: 'evt_test_thin_connect',
      object: 'v2.core.event',
      type: 'v1.invoice.paid',
      created: '2026-02-01T10:00:00.000Z',
      livemode: false,
      context: ACCOUNT,
      related_object: { id: 'in_1', type: 'invoice', url: '/v1/invoices/in_1' },
    };
    await storeEvent(testDb.db, 'payments', thin.type, thin, thin.id);
    await drain(setup().worker);
    expect(await statuses()).toEqual(['processed']);
    expect(await subscriptions()).toEqual([{ id: 'sub_c1', customer_id: 'cus_1', status: 'active', price_id: 'price_pro' }]);
    expect(await customers()).toEqual([{ id: 'cus_1', email: 'connected@example.com', deleted: false }]);
  });

  it('a subscription and a customer a 404 marked gone are revived by a later event that finds them live', async () => {
    const { worker, clock } = setup();
    // What a hookrun before this fix left: the connected account's objects fetched without it, so 404, so canceled and deleted.
    await storeEvent(testDb.db, 'payments', 'invoice.paid', stripeEvent('invoice.paid', SECOND, { customer: 'cus_1', subscription: 'sub_c1' }));
    await drain(worker);
    expect(await subscriptions()).toEqual([{ id: 'sub_c1', customer_id: 'cus_1', status: 'canceled', price_id: null }]);
    expect(await customers()).toEqual([{ id: 'cus_1', email: null, deleted: true }]);
    // A later event, fetched in its account, finds both live: the mirror says what the API says.
    connected();
    clock.advance(MINUTE);
    await storeEvent(testDb.db, 'payments', 'invoice.paid', connectEvent('invoice.paid', { customer: 'cus_1', subscription: 'sub_c1' }));
    await drain(worker);
    expect(await statuses()).toEqual(['processed', 'processed']);
    expect(await subscriptions()).toEqual([{ id: 'sub_c1', customer_id: 'cus_1', status: 'active', price_id: 'price_pro' }]);
    expect(await customers()).toEqual([{ id: 'cus_1', email: 'connected@example.com', deleted: false }]);
  });

  it('a read of the API no newer than the 404 does not revive: only what the API shows after it counts', async () => {
    const { worker, clock } = setup();
    fake.subscriptions.set('sub_1', stripeSubscription('sub_1', 'active'));
    fake.customers.set('cus_1', { id: 'cus_1', object: 'customer', email: 'a@example.com' });
    clock.advance(MINUTE);
    await storeEvent(testDb.db, 'payments', 'invoice.paid', stripeEvent('invoice.paid', SECOND, { customer: 'cus_1', subscription: 'sub_1' }));
    await drain(worker);
    // Stripe deletes both; a fetch begun earlier (a minute ago, on another instance) returns late, after the 404 was stored.
    fake.reset();
    await storeEvent(testDb.db, 'payments', 'invoice.paid', stripeEvent('invoice.paid', SECOND + 1, { customer: 'cus_1', subscription: 'sub_1' }));
    await drain(worker);
    const stale = new Date(clock.now() - MINUTE);
    const sub = { id: 'sub_1', customerId: 'cus_1', status: 'active', priceId: null, currentPeriodEnd: null, cancelAtPeriodEnd: null };
    expect(await upsertSubscription(testDb.db, { ...sub, at: stale, readFromApi: true })).toBe(false);
    await upsertCustomer(testDb.db, { id: 'cus_1', email: 'a@example.com', userId: null, at: stale, readFromApi: true });
    expect(await subscriptions()).toEqual([{ id: 'sub_1', customer_id: 'cus_1', status: 'canceled', price_id: 'price_basic' }]);
    expect(await customers()).toEqual([{ id: 'cus_1', email: 'a@example.com', deleted: true }]);
  });

  it('a reconcile that stores a missed event revives the subscription a 404 canceled', async () => {
    const { worker, clock } = setup();
    await storeEvent(
      testDb.db,
      'payments',
      'customer.subscription.updated',
      stripeEvent('customer.subscription.updated', SECOND, stripeSubscription('sub_1', 'active')),
    );
    await drain(worker);
    expect(await subscriptions()).toEqual([{ id: 'sub_1', customer_id: 'cus_1', status: 'canceled', price_id: null }]);
    // The object is back in the API (the key of the right account), and an event hookrun missed names it.
    fake.subscriptions.set('sub_1', stripeSubscription('sub_1', 'trialing', { price: 'price_basic' }));
    fake.events.push({
      ...stripeEvent('customer.subscription.updated', Math.floor(clock.now() / 1000), stripeSubscription('sub_1', 'trialing')),
      id: 'evt_missed',
    });
    clock.advance(MINUTE);
    const summary = await reconcilePayments({ api, writer: new EventWriter(testDb.db), since: parseReconcileSince('1d', clock.now()) });
    expect(summary).toMatchObject({ added: 1, addedIds: ['evt_missed'] });
    await drain(worker);
    expect(await subscriptions()).toEqual([{ id: 'sub_1', customer_id: 'cus_1', status: 'trialing', price_id: 'price_basic' }]);
  });
});
