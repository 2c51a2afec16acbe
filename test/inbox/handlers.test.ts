import { beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import {
  clerkDeleted,
  clerkMembership,
  clerkOrganization,
  clerkUser,
  drain,
  eventRow,
  storeEvent,
  stripeEvent,
  stripeSubscription,
  testWorker,
} from './fixtures.js';

const T = Date.UTC(2026, 5, 1); // ms epoch, Clerk's unit
const S = Math.floor(T / 1000); // seconds, Stripe's unit

describe.each(databaseKinds())('shipped handlers on $name', (kind) => {
  const testDb = useTestDatabase(kind);
  let db: Database;
  beforeEach(() => {
    db = testDb.db;
  });

  async function process(...events: Array<[string, unknown]>): Promise<number[]> {
    // One event at a time, so the arrival order is the processing order the test describes.
    const { worker } = testWorker(db);
    const ids: number[] = [];
    for (const [source, payload] of events) {
      ids.push(await storeEvent(db, source, (payload as { type: string }).type, payload));
      await drain(worker);
    }
    return ids;
  }
  const one = async <T>(sql: string, params: unknown[] = []) => (await db.query<T>(sql, params))[0];

  it('user.created then user.updated mirror the user (primary email); each event processed on its first attempt', async () => {
    const ids = await process(
      ['auth', clerkUser('user.created', 'user_1', T)],
      ['auth', clerkUser('user.updated', 'user_1', T + 1000, { email: 'new@example.com', first: 'Grace' })],
    );
    expect(await one('SELECT id, email, first_name, last_name, deleted_at FROM hookrun.users')).toEqual({
      id: 'user_1',
      email: 'new@example.com',
      first_name: 'Grace',
      last_name: 'Lovelace',
      deleted_at: null,
    });
    for (const id of ids) expect(await eventRow(db, id)).toMatchObject({ status: 'processed', attempts: 1, last_error: null });
  });

  it('an updated_at past the year 3000 (e.g. 2^53-1) is dead at once, not retried, and writes nothing', async () => {
    const [id] = await process(['auth', clerkUser('user.updated', 'user_far', Number.MAX_SAFE_INTEGER)]);
    expect(await eventRow(db, id!)).toMatchObject({ status: 'dead', attempts: 1, last_error: expect.stringContaining('after the year 3000') });
    expect(await one('SELECT count(*)::int AS n FROM hookrun.users')).toEqual({ n: 0 });
  });

  it('updated before created: the older created does not win', async () => {
    await process(
      ['auth', clerkUser('user.updated', 'user_1', T + 1000, { email: 'new@example.com' })],
      ['auth', clerkUser('user.created', 'user_1', T, { email: 'old@example.com' })],
    );
    expect(await one('SELECT email FROM hookrun.users')).toEqual({ email: 'new@example.com' });
  });

  it('user.deleted uses the event timestamp; a stale update sent last does not undo it', async () => {
    await process(
      ['auth', clerkUser('user.created', 'user_1', T)],
      ['auth', clerkDeleted('user.deleted', 'user', 'user_1', T + 5000)],
      ['auth', clerkUser('user.updated', 'user_1', T + 2000, { email: 'stale@example.com' })],
      ['auth', clerkUser('user.updated', 'user_1', T + 5000, { email: 'same-ms@example.com' })],
    );
    const row = await one<{ email: string; deleted_at: Date; source_updated_at: Date }>('SELECT email, deleted_at, source_updated_at FROM hookrun.users');
    expect(row!.email).toBe('user_1@example.com');
    expect(new Date(row!.deleted_at).getTime()).toBe(T + 5000);
  });

  it('an update strictly newer than the delete refreshes fields but the user stays deleted', async () => {
    await process(
      ['auth', clerkDeleted('user.deleted', 'user', 'user_1', T)],
      ['auth', clerkUser('user.updated', 'user_1', T + 1, { email: 'newer@example.com' })],
    );
    const row = await one<{ email: string; deleted_at: Date }>('SELECT email, deleted_at FROM hookrun.users');
    expect(row!.email).toBe('newer@example.com');
    expect(new Date(row!.deleted_at).getTime()).toBe(T);
  });

  it('a delete that arrives before the create leaves a tombstone the create cannot resurrect', async () => {
    await process(['auth', clerkDeleted('user.deleted', 'user', 'user_1', T + 10)], ['auth', clerkUser('user.created', 'user_1', T)]);
    const row = await one<{ email: string | null; deleted_at: Date }>('SELECT email, deleted_at FROM hookrun.users');
    expect(row!.email).toBeNull();
    expect(row!.deleted_at).not.toBeNull();
  });

  it('re-running the same events changes nothing (idempotent)', async () => {
    const payloads: Array<[string, unknown]> = [
      ['auth', clerkUser('user.created', 'user_1', T)],
      ['auth', clerkDeleted('user.deleted', 'user', 'user_1', T + 10)],
      ['payments', stripeEvent('customer.subscription.updated', S, stripeSubscription('sub_1', 'active'))],
    ];
    await process(...payloads);
    const snapshot = async () => [await db.query('SELECT * FROM hookrun.users'), await db.query('SELECT * FROM hookrun.subscriptions')];
    const before = await snapshot();
    await db.query(`UPDATE hookrun.webhook_events SET status = 'pending'`);
    await drain(testWorker(db).worker);
    expect(await snapshot()).toEqual(before);
  });

  it('organization created/updated/deleted', async () => {
    await process(
      ['auth', clerkOrganization('organization.created', 'org_1', T, 'Acme')],
      ['auth', clerkOrganization('organization.updated', 'org_1', T + 1000, 'Acme Two')],
    );
    expect(await one('SELECT name, slug, deleted_at FROM hookrun.organizations')).toEqual({ name: 'Acme Two', slug: 'acme two', deleted_at: null });
    await process(
      ['auth', clerkDeleted('organization.deleted', 'organization', 'org_1', T + 2000)],
      ['auth', clerkOrganization('organization.updated', 'org_1', T + 1500, 'Stale')],
    );
    const row = await one<{ name: string; deleted_at: Date }>('SELECT name, deleted_at FROM hookrun.organizations');
    expect(row!.name).toBe('Acme Two');
    expect(new Date(row!.deleted_at).getTime()).toBe(T + 2000);
  });

  it('organizationMembership created/updated/deleted', async () => {
    await process(
      ['auth', clerkMembership('organizationMembership.updated', 'orgmem_1', T + 1000, 'org:admin')],
      ['auth', clerkMembership('organizationMembership.created', 'orgmem_1', T, 'org:member')],
    );
    expect(await one('SELECT organization_id, user_id, role, deleted_at FROM hookrun.memberships')).toEqual({
      organization_id: 'org_1',
      user_id: 'user_1',
      role: 'org:admin',
      deleted_at: null,
    });
    const deleted = clerkMembership('organizationMembership.deleted', 'orgmem_1', T + 1000);
    deleted.timestamp = T + 3000;
    await process(['auth', deleted]);
    const row = await one<{ deleted_at: Date }>('SELECT deleted_at FROM hookrun.memberships');
    expect(new Date(row!.deleted_at).getTime()).toBe(T + 3000);
  });

  it('checkout.session.completed links the customer to client_reference_id; a later event without it keeps the link', async () => {
    await process([
      'payments',
      stripeEvent('checkout.session.completed', S, {
        id: 'cs_1',
        object: 'checkout.session',
        customer: 'cus_1',
        client_reference_id: 'user_1',
        customer_details: { email: 'ada@example.com' },
        mode: 'subscription',
      }),
    ]);
    expect(await one('SELECT id, email, user_id FROM hookrun.customers')).toEqual({ id: 'cus_1', email: 'ada@example.com', user_id: 'user_1' });
    await process(['payments', stripeEvent('invoice.paid', S + 10, { id: 'in_1', object: 'invoice', customer: 'cus_1', customer_email: 'new@example.com' })]);
    expect(await one('SELECT id, email, user_id FROM hookrun.customers')).toEqual({ id: 'cus_1', email: 'new@example.com', user_id: 'user_1' });
  });

  it('customer.subscription.created/updated: both API shapes of current_period_end; an older update does not win', async () => {
    await process(
      [
        'payments',
        stripeEvent('customer.subscription.created', S, stripeSubscription('sub_1', 'incomplete', { periodOn: 'subscription', periodEnd: S + 100 })),
      ],
      [
        'payments',
        stripeEvent(
          'customer.subscription.updated',
          S + 60,
          stripeSubscription('sub_1', 'active', { price: 'price_pro', periodEnd: S + 200, cancelAtPeriodEnd: true }),
        ),
      ],
      ['payments', stripeEvent('customer.subscription.updated', S + 30, stripeSubscription('sub_1', 'past_due', { price: 'price_stale' }))],
    );
    const row = await one<Record<string, unknown>>('SELECT customer_id, status, price_id, current_period_end, cancel_at_period_end FROM hookrun.subscriptions');
    expect(row).toMatchObject({ customer_id: 'cus_1', status: 'active', price_id: 'price_pro', cancel_at_period_end: true });
    expect(new Date(row!.current_period_end as Date).getTime()).toBe((S + 200) * 1000);
    await process([
      'payments',
      stripeEvent('customer.subscription.created', S + 500, stripeSubscription('sub_2', 'trialing', { periodOn: 'subscription', periodEnd: S + 900 })),
    ]);
    const old = await one<{ current_period_end: Date }>(`SELECT current_period_end FROM hookrun.subscriptions WHERE id = 'sub_2'`);
    expect(new Date(old!.current_period_end).getTime()).toBe((S + 900) * 1000);
  });

  it('customer.subscription.deleted sets canceled, and a same-second update cannot reactivate it', async () => {
    await process(
      ['payments', stripeEvent('customer.subscription.deleted', S + 5, stripeSubscription('sub_1', 'canceled'))],
      ['payments', stripeEvent('customer.subscription.updated', S + 5, stripeSubscription('sub_1', 'active'))],
      ['payments', stripeEvent('customer.subscription.created', S, stripeSubscription('sub_1', 'active'))],
    );
    expect(await one('SELECT status FROM hookrun.subscriptions')).toEqual({ status: 'canceled' });
  });

  it('invoice.payment_failed makes an active subscription past_due; invoice.paid makes it active again (newer API parent shape)', async () => {
    await process(['payments', stripeEvent('customer.subscription.created', S, stripeSubscription('sub_1', 'active'))]);
    await process([
      'payments',
      stripeEvent('invoice.payment_failed', S + 10, {
        id: 'in_1',
        object: 'invoice',
        customer: 'cus_1',
        subscription: 'sub_1',
        customer_email: 'a@example.com',
      }),
    ]);
    expect(await one('SELECT status FROM hookrun.subscriptions')).toEqual({ status: 'past_due' });
    await process([
      'payments',
      stripeEvent('invoice.paid', S + 20, {
        id: 'in_1',
        object: 'invoice',
        customer: 'cus_1',
        parent: { type: 'subscription_details', subscription_details: { subscription: 'sub_1' } },
      }),
    ]);
    expect(await one('SELECT status FROM hookrun.subscriptions')).toEqual({ status: 'active' });
    // A stale failure (older than the stored state) is ignored.
    await process(['payments', stripeEvent('invoice.payment_failed', S + 15, { id: 'in_1', object: 'invoice', customer: 'cus_1', subscription: 'sub_1' })]);
    expect(await one('SELECT status FROM hookrun.subscriptions')).toEqual({ status: 'active' });
    expect(await one('SELECT email FROM hookrun.customers')).toEqual({ email: 'a@example.com' });
  });

  it('database changes: the default records and succeeds; a registered table handler runs', async () => {
    const ids = await process(['database', { type: 'INSERT', table: 'orders', schema: 'public', record: { id: 1 }, old_record: null }]);
    expect(await eventRow(db, ids[0]!)).toMatchObject({ status: 'processed', attempts: 1 });
    const { createDatabaseChangesHandlers } = await import('../../src/inbox/handlers/database-changes.js');
    const { HandlerRegistry } = await import('../../src/deliveries/registry.js');
    const seen: string[] = [];
    const handlers = new HandlerRegistry().onTable(
      'database',
      createDatabaseChangesHandlers({ 'public.orders': async (change) => void seen.push(`${change.type}:${change.table}:${String(change.oldRecord?.id)}`) }),
    );
    await storeEvent(db, 'database', 'DELETE', { type: 'DELETE', table: 'orders', schema: 'public', record: null, old_record: { id: 7 } });
    await drain(testWorker(db, { handlers }).worker);
    expect(seen).toEqual(['DELETE:orders:7']);
  });

  it('a type with no handler is ignored; a malformed payload is dead at once with a clear error', async () => {
    const [ignored, malformed, badStripe] = await process(
      ['payments', stripeEvent('charge.refunded', S, { id: 'ch_1' })],
      ['auth', { type: 'user.created', object: 'event', data: { id: 'user_1', email_addresses: 'nope' } }],
      ['payments', { id: 'evt_x', type: 'customer.subscription.updated', data: { object: { id: 'sub_1' } } }],
    );
    expect(await eventRow(db, ignored!)).toMatchObject({ status: 'ignored', attempts: 0 }); // no handler ran: no attempt
    const dead = await eventRow(db, malformed!);
    expect(dead).toMatchObject({ status: 'dead', attempts: 1 });
    expect(dead.last_error).toMatch(/^Malformed auth user\.created payload: /);
    expect(dead.last_error).toContain('data.updated_at');
    const deadStripe = await eventRow(db, badStripe!);
    expect(deadStripe).toMatchObject({ status: 'dead', attempts: 1 });
    expect(deadStripe.last_error).toContain('created');
    expect(await db.query('SELECT * FROM hookrun.users')).toEqual([]);
  });
});
