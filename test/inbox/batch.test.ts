import { describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import {
  PaymentsMirrorWrites,
  transitionSubscription,
  upsertCustomer,
  upsertSubscription,
  type CustomerState,
  type SubscriptionState,
  type TransitionState,
} from '../../src/db/payments-mirror.js';
import { createDefaultHandlers } from '../../src/inbox/handlers/defaults.js';
import { databaseKinds, emptyTables, useTestDatabase } from '../helpers/db.js';
import { drain, eventRow, storeEvent, testWorker } from './fixtures.js';

const sub = (type: string, created: number, status: string, extra: Record<string, unknown> = {}) => ({
  type,
  created,
  data: {
    object: {
      id: 'sub_1',
      customer: 'cus_1',
      status,
      cancel_at_period_end: false,
      items: { data: [{ price: { id: 'price_1' }, current_period_end: created + 100 }] },
      ...extra,
    },
  },
});
const invoice = (type: string, created: number, email: string | null) => ({
  type,
  created,
  data: { object: { customer: 'cus_1', customer_email: email, subscription: 'sub_1' } },
});
const checkout = (created: number, email: string, userId: string | null) => ({
  type: 'checkout.session.completed',
  created,
  data: { object: { customer: 'cus_1', customer_details: { email }, client_reference_id: userId } },
});

/** Several writes to the same rows, some stale, in arrival order. */
const SEQUENCE = [
  sub('customer.subscription.created', 10, 'active'),
  invoice('invoice.payment_failed', 20, 'a@example.com'),
  checkout(15, 'old@example.com', 'user_1'),
  invoice('invoice.paid', 30, 'b@example.com'),
  sub('customer.subscription.updated', 25, 'trialing'), // stale: older than the paid invoice
  invoice('invoice.payment_failed', 35, null),
  invoice('invoice.paid', 5, 'stale@example.com'), // stale
  sub('customer.subscription.deleted', 40, 'active'),
  sub('customer.subscription.updated', 40, 'active'), // same second as the cancellation: stays canceled
  checkout(50, 'new@example.com', null),
];

async function mirrorState(db: Database) {
  return {
    customers: await db.query(`SELECT id, email, user_id, source_updated_at FROM hookrun.customers ORDER BY id`),
    subscriptions: await db.query(
      `SELECT id, customer_id, status, price_id, current_period_end, cancel_at_period_end, source_updated_at FROM hookrun.subscriptions ORDER BY id`,
    ),
  };
}

describe.each(databaseKinds())('batched processing on $name', (kind) => {
  const testDb = useTestDatabase(kind);

  it('writes to the same rows within one batch end as they do one event at a time', async () => {
    const store = async () => {
      for (const payload of SEQUENCE) await storeEvent(testDb.db, 'payments', payload.type, payload);
    };
    await store();
    await drain(testWorker(testDb.db, { options: { batchSize: 1 } }).worker);
    const oneByOne = await mirrorState(testDb.db);
    expect(oneByOne.subscriptions).toMatchObject([{ status: 'canceled' }]);
    expect(oneByOne.customers).toMatchObject([{ email: 'new@example.com', user_id: 'user_1' }]);

    await emptyTables(testDb.db);
    await store();
    const { worker } = testWorker(testDb.db, { options: { batchSize: 100 } });
    expect(await worker.runOnce()).toBe(SEQUENCE.length);
    expect(await mirrorState(testDb.db)).toEqual(oneByOne);
  });

  it('the payments mirror queue applies as the same writes one by one do; a single write is a batch of one and says when it was stale', async () => {
    const at = (s: number) => new Date(s * 1000);
    const subscription = (s: number, status: string): SubscriptionState => ({
      id: 'sub_1',
      customerId: 'cus_1',
      status,
      priceId: null,
      currentPeriodEnd: null,
      cancelAtPeriodEnd: null,
      at: at(s),
    });
    const writes: Array<['customer', CustomerState] | ['subscription', SubscriptionState] | ['transition', TransitionState]> = [
      ['customer', { id: 'cus_1', email: 'a@example.com', userId: null, at: at(10) }],
      ['subscription', subscription(10, 'active')],
      ['transition', { id: 'sub_1', fromStatuses: ['active', 'trialing'], toStatus: 'past_due', at: at(20) }],
      ['customer', { id: 'cus_1', email: 'old@example.com', userId: 'user_1', at: at(5) }],
      ['subscription', subscription(15, 'trialing')],
      ['transition', { id: 'sub_1', fromStatuses: ['past_due'], toStatus: 'active', at: at(30) }],
      ['customer', { id: 'cus_2', email: null, userId: null, at: at(1) }],
      ['subscription', subscription(40, 'canceled')],
      ['subscription', subscription(40, 'active')],
    ];
    const results: boolean[] = [];
    for (const [kind, w] of writes) {
      if (kind === 'customer') results.push(await upsertCustomer(testDb.db, w));
      else if (kind === 'subscription') results.push(await upsertSubscription(testDb.db, w));
      else results.push(await transitionSubscription(testDb.db, w));
    }
    // Truthful: the stale trialing (15 < 20) and the transition from a status the row no longer has changed nothing.
    expect(results).toEqual([true, true, true, true, false, true, true, true, true]);
    const oneByOne = await mirrorState(testDb.db);
    expect(oneByOne.subscriptions).toMatchObject([{ status: 'canceled' }]);
    await emptyTables(testDb.db);
    await testDb.db.transaction(async (tx) => {
      const queue = new PaymentsMirrorWrites();
      for (const [kind, w] of writes) {
        if (kind === 'customer') queue.customer(w);
        else if (kind === 'subscription') queue.subscription(w);
        else queue.transition(w);
      }
      expect(await mirrorState(tx as Database)).toEqual({ customers: [], subscriptions: [] }); // nothing written before the flush
      await queue.flush(tx);
    });
    expect(await mirrorState(testDb.db)).toEqual(oneByOne);
  });

  it('a failing statement fails only its own event; a malformed payload is dead; the rest of the batch is processed', async () => {
    const handlers = createDefaultHandlers()
      .on('test', 'bad-sql', async ({ db: q }) => {
        await q.query('SELECT 1 / 0');
      })
      .on('test', 'swallows', async ({ db: q }) => {
        await q.query('SELECT 1 / 0').catch(() => undefined); // leaves the shared transaction aborted
      });
    const good = await storeEvent(testDb.db, 'payments', 'checkout.session.completed', checkout(60, 'c@example.com', null));
    const bad = await storeEvent(testDb.db, 'test', 'bad-sql', {});
    const malformed = await storeEvent(testDb.db, 'payments', 'invoice.paid', { created: 'yesterday' });
    const swallows = await storeEvent(testDb.db, 'test', 'swallows', {});
    const late = await storeEvent(testDb.db, 'payments', 'customer.subscription.created', sub('customer.subscription.created', 70, 'active'));
    const { worker } = testWorker(testDb.db, { handlers });
    expect(await worker.runOnce()).toBe(5);
    expect(await eventRow(testDb.db, good)).toMatchObject({ status: 'processed', attempts: 1 });
    expect(await eventRow(testDb.db, bad)).toMatchObject({ status: 'failed', attempts: 1, last_error: expect.stringMatching(/division by zero/) });
    expect(await eventRow(testDb.db, malformed)).toMatchObject({ status: 'dead', attempts: 1 });
    expect(await eventRow(testDb.db, swallows)).toMatchObject({ status: 'processed', attempts: 1 });
    expect(await eventRow(testDb.db, late)).toMatchObject({ status: 'processed', attempts: 1 });
    expect(await mirrorState(testDb.db)).toMatchObject({ customers: [{ email: 'c@example.com' }], subscriptions: [{ status: 'active' }] });
  });
});
