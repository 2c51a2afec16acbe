import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Stripe from 'stripe';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, expectTypeOf, it } from 'vitest';
import { listAttempts } from '../../src/db/events.js';
import { createDefaultHandlers } from '../../src/inbox/handlers/defaults.js';
import { defineHandler } from '../../src/index.js';
import { createStripeApi, type StripeApi } from '../../src/payments-api/stripe-client.js';
import { loadHandlers } from '../../src/project/load-project.js';
import { createTestApp, countEvents } from '../helpers/app.js';
import { SECRETS, testConfig } from '../helpers/config.js';
import { pgliteOnly, useTestDatabase } from '../helpers/db.js';
import { FakeStripeApi, TEST_STRIPE_KEY } from '../helpers/fake-stripe-api.js';
import { drain, eventRow, storeEvent, stripeSubscription, testWorker } from '../inbox/fixtures.js';

/** hookrun's public entry as a project file imports it (from source, under Vitest). */
const HOOKRUN = JSON.stringify(join(import.meta.dirname, '..', '..', 'src', 'index.ts'));

let seq = 0;
/** A thin event as Stripe's event destinations send it (https://docs.stripe.com/event-destinations#thin-payload). */
function thinEvent(type: string, related: { id: string; type: string; url: string } | null, extra: Record<string, unknown> = {}) {
  seq += 1;
  return {
    id: `evt_test_thin_${Date.now()}_${seq}`,
    object: 'v2.core.event',
    type,
    created: '2026-02-01T10:00:00.000Z',
    livemode: false,
    ...(related ? { related_object: related } : {}),
    ...extra,
  };
}
const subscriptionRef = (id: string) => ({ id, type: 'subscription', url: `/v1/subscriptions/${id}` });

/** The same event as `GET /v2/core/events/:id` answers it: the body plus what a thin body leaves out. */
const fullEvent = (thin: ReturnType<typeof thinEvent>) => ({
  ...thin,
  context: null,
  reason: { type: 'request', request: { id: 'req_thin_1', idempotency_key: 'idem_1' } },
  changes: { status: { from: 'trialing', to: 'active' } },
});

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A project with one handler file, `handlers/<name>.ts`. */
function projectWith(name: string, source: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'hookrun-thin-'));
  dirs.push(dir);
  mkdirSync(join(dir, 'handlers'));
  writeFileSync(join(dir, 'handlers', `${name}.ts`), source);
  return dir;
}

/** A handler on a thin type that records what it was given and what it fetched, in table `thin_seen`. */
const recorder = (call: string) => `import { defineHandler } from ${HOOKRUN};
export default defineHandler({
  on: ['stripe:v1.customer.subscription.updated'],
  async run(event, ctx) {
    ${call}
  },
});
`;
const RECORD_BOTH = `const full = await ctx.stripe.fetchEvent();
    const subscription = await ctx.stripe.fetchRelatedObject();
    await ctx.db.query('INSERT INTO thin_seen VALUES ($1, $2, $3, $4)', [event.type, event.related_object.id, full.reason.type, subscription.status]);`;

// Compile-time: the payload and ctx.stripe are typed from stripe-node's thin event types (npm run typecheck checks this).
defineHandler({
  on: ['stripe:v1.customer.subscription.updated', 'stripe:v1.invoice.paid'],
  async run(event, ctx) {
    expectTypeOf(event.type).toEqualTypeOf<'v1.customer.subscription.updated' | 'v1.invoice.paid'>();
    expectTypeOf(event.related_object.url).toBeString();
    expectTypeOf(await ctx.stripe.fetchRelatedObject()).toEqualTypeOf<Stripe.Subscription | Stripe.Invoice>();
    expectTypeOf((await ctx.stripe.fetchEvent()).created).toBeString();
  },
});

describe.each(pgliteOnly())('Stripe thin events on $name', (kind) => {
  const testDb = useTestDatabase(kind);
  const fake = new FakeStripeApi();
  let api: StripeApi;
  beforeAll(async () => {
    api = createStripeApi({ secretKey: TEST_STRIPE_KEY, apiBase: new URL(await fake.start()) });
  });
  afterAll(() => fake.close());
  beforeEach(async () => {
    fake.reset();
    await testDb.db.query('CREATE TABLE IF NOT EXISTS thin_seen (type text, related text, reason text, status text)');
    await testDb.db.query('TRUNCATE thin_seen');
  });

  it('a signed thin event is stored with its own id and type, and a duplicate delivery is stored once', async () => {
    const { app } = createTestApp(testDb.db);
    const body = JSON.stringify(thinEvent('v1.customer.subscription.updated', subscriptionRef('sub_1')));
    const post = () =>
      app.request('/webhooks/payments', {
        method: 'POST',
        body,
        headers: {
          'content-type': 'application/json',
          'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload: body, secret: SECRETS.payments }),
        },
      });
    const first = await post();
    expect(first.status).toBe(200);
    const answer = await first.json();
    expect(answer).toMatchObject({ received: true, duplicate: false });
    expect(await (await post()).json()).toEqual({ received: true, id: answer.id, duplicate: true });
    expect(await countEvents(testDb.db)).toBe(1);
    const [row] = await testDb.db.query<{ key: string; type: string; status: string }>('SELECT key, type, status FROM hookrun.webhook_events');
    expect(row).toEqual({ key: JSON.parse(body).id, type: 'v1.customer.subscription.updated', status: 'pending' });
  });

  it("a project handler gets the thin event and fetches the full event and the related object through the service's client", async () => {
    const thin = thinEvent('v1.customer.subscription.updated', subscriptionRef('sub_1'), { context: 'acct_1Connected' });
    fake.v2Events.set(thin.id, fullEvent(thin));
    fake.subscriptions.set('sub_1', stripeSubscription('sub_1', 'active'));
    fake.owners.set('sub_1', 'acct_1Connected'); // visible only in its account: the handler's fetch and the mirror's both name it
    const env = { HOOKRUN_PROJECT: projectWith('on-thin', recorder(RECORD_BOTH)) };
    const { registry } = await loadHandlers(testConfig(env), { stripe: api }, env);
    const id = await storeEvent(testDb.db, 'payments', thin.type, thin, thin.id);
    await drain(testWorker(testDb.db, { handlers: registry }).worker);
    expect(await eventRow(testDb.db, id)).toMatchObject({ status: 'processed', attempts: 1 });
    expect(await testDb.db.query('SELECT * FROM thin_seen')).toEqual([
      { type: 'v1.customer.subscription.updated', related: 'sub_1', reason: 'request', status: 'active' },
    ]);
    expect(fake.requests).toContain(`GET /v2/core/events/${thin.id}`);
    expect(fake.requests.filter((r) => r === 'GET /v1/subscriptions/sub_1').length).toBeGreaterThanOrEqual(2); // the handler's, the mirror's
    expect(fake.contexts).toContain('acct_1Connected'); // the event's context goes with its fetches
    expect((await listAttempts(testDb.db, id)).map((a) => a.handler).sort()).toEqual(['on-thin', 'stripe-mirror']);
  });

  it('the payments mirror applies what the API has now for thin subscription, invoice and checkout events', async () => {
    fake.subscriptions.set('sub_1', stripeSubscription('sub_1', 'past_due', { price: 'price_pro', periodEnd: 1_900_000_000 }));
    fake.customers.set('cus_1', { id: 'cus_1', object: 'customer', email: 'now@example.com' });
    fake.invoices.set('in_1', { id: 'in_1', object: 'invoice', customer: 'cus_1', parent: { subscription_details: { subscription: 'sub_1' } } });
    fake.checkoutSessions.set('cs_1', { id: 'cs_1', object: 'checkout.session', customer: 'cus_1', client_reference_id: 'user_1' });
    const events = [
      thinEvent('v1.customer.subscription.updated', subscriptionRef('sub_1')),
      thinEvent('v1.invoice.payment_failed', { id: 'in_1', type: 'invoice', url: '/v1/invoices/in_1' }),
      thinEvent('v1.checkout.session.completed', { id: 'cs_1', type: 'checkout.session', url: '/v1/checkout/sessions/cs_1' }),
    ];
    for (const event of events) await storeEvent(testDb.db, 'payments', event.type, event, event.id);
    await drain(testWorker(testDb.db, { handlers: createDefaultHandlers({ stripe: api }) }).worker);
    const statuses = await testDb.db.query<{ status: string }>('SELECT status FROM hookrun.webhook_events ORDER BY id');
    expect(statuses.map((r) => r.status)).toEqual(['processed', 'processed', 'processed']);
    expect(await testDb.db.query('SELECT id, customer_id, status, price_id, current_period_end FROM hookrun.subscriptions')).toEqual([
      { id: 'sub_1', customer_id: 'cus_1', status: 'past_due', price_id: 'price_pro', current_period_end: new Date(1_900_000_000 * 1000) },
    ]);
    expect(await testDb.db.query('SELECT id, email, user_id FROM hookrun.customers')).toEqual([{ id: 'cus_1', email: 'now@example.com', user_id: 'user_1' }]);
    expect(fake.requests).toEqual(expect.arrayContaining(['GET /v1/invoices/in_1', 'GET /v1/checkout/sessions/cs_1', 'GET /v1/customers/cus_1']));
  });

  it('without STRIPE_SECRET_KEY the event is stored and its delivery fails saying the key is needed, then is retried', async () => {
    const env = { HOOKRUN_PROJECT: projectWith('on-thin', recorder(RECORD_BOTH)) };
    const { registry } = await loadHandlers(testConfig(env), {}, env);
    const thin = thinEvent('v1.customer.subscription.updated', subscriptionRef('sub_1'));
    const id = await storeEvent(testDb.db, 'payments', thin.type, thin, thin.id);
    const { worker, clock } = testWorker(testDb.db, { handlers: registry });
    await worker.runOnce();
    const row = await eventRow(testDb.db, id);
    expect(row).toMatchObject({ status: 'failed', attempts: 1 });
    expect(row.last_error).toMatch(/fetching it needs STRIPE_SECRET_KEY .* set it and restart hookrun; the event is retried/);
    const attempts = await listAttempts(testDb.db, id);
    expect(attempts.map((a) => a.handler).sort()).toEqual(['on-thin', 'stripe-mirror']);
    for (const attempt of attempts) expect(attempt.error).toContain('needs STRIPE_SECRET_KEY');
    expect(fake.requests).toEqual([]);
    // The key is set and hookrun restarted: the queued retry succeeds with no replay.
    fake.v2Events.set(thin.id, fullEvent(thin));
    fake.subscriptions.set('sub_1', stripeSubscription('sub_1', 'active'));
    const restarted = await loadHandlers(testConfig(env), { stripe: api }, env);
    clock.advance(3_600_000);
    await drain(testWorker(testDb.db, { handlers: restarted.registry, clock }).worker);
    expect(await eventRow(testDb.db, id)).toMatchObject({ status: 'processed', attempts: 2 });
    expect(await testDb.db.query('SELECT status FROM thin_seen')).toEqual([{ status: 'active' }]);
  });

  it('a thin event without related_object is stored; fetchRelatedObject sends it to dead at once with a clear error', async () => {
    const { app } = createTestApp(testDb.db);
    const thin = thinEvent('v1.customer.subscription.updated', null);
    const body = JSON.stringify(thin);
    const signature = Stripe.webhooks.generateTestHeaderString({ payload: body, secret: SECRETS.payments });
    const stored = await app.request('/webhooks/payments', {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', 'stripe-signature': signature },
    });
    expect(stored.status).toBe(200);
    const { id } = await stored.json();
    const env = { HOOKRUN_PROJECT: projectWith('on-thin', recorder('await ctx.stripe.fetchRelatedObject();')) };
    const { registry } = await loadHandlers(testConfig(env), { stripe: api }, env);
    await testWorker(testDb.db, { handlers: registry }).worker.runOnce();
    const row = await eventRow(testDb.db, id);
    expect(row).toMatchObject({ status: 'dead', attempts: 1 });
    expect(row.last_error).toMatch(/has no related_object \(id, type, url\): there is no object to fetch, and no retry can add one/);
    expect(fake.requests).toEqual([]);
  });
});
