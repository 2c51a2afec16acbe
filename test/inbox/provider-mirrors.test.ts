import { describe, expect, it } from 'vitest';
import type { ProviderChoice } from '../../src/webhooks/providers/index.js';
import { createDefaultHandlers } from '../../src/inbox/handlers/defaults.js';
import { AUTH_PROVIDERS, PAYMENTS_PROVIDERS } from '../../src/webhooks/providers/index.js';
import { buildSample } from '../../src/webhooks/samples.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { drain, storeEvent, testWorker } from './fixtures.js';

const T0 = Date.UTC(2026, 4, 1, 12, 0, 0);
const at = (minutes: number) => new Date(T0 + minutes * 60_000).toISOString();

/** A Paddle subscription notification whose object says it was updated at `minutes` past T0. */
function paddle(type: string, id: string, status: string, minutes: number, extra: Record<string, unknown> = {}) {
  return buildSample('payments', type, { data: { id, status, customer_id: 'ctm_01', updated_at: at(minutes), ...extra } }, T0, PAYMENTS_PROVIDERS.paddle);
}

function lemon(type: string, id: string, status: string, minutes: number) {
  return buildSample(
    'payments',
    type,
    { data: { id, attributes: { status, customer_id: 77, user_email: 'ada@example.com', variant_id: 5, updated_at: at(minutes) } } },
    T0,
    PAYMENTS_PROVIDERS.lemonsqueezy,
  );
}

function workos(type: string, id: string, email: string, minutes: number) {
  return buildSample('auth', type, { data: { id, email, updated_at: at(minutes) }, created_at: at(minutes) }, T0, AUTH_PROVIDERS.workos);
}

describe.each(databaseKinds())('provider mirrors on $name', (kind) => {
  const tdb = useTestDatabase(kind);

  async function process(
    providers: ProviderChoice,
    source: 'payments' | 'auth',
    events: Array<Record<string, unknown>>,
    typeOf: (e: Record<string, unknown>) => string,
  ) {
    for (const [i, event] of events.entries()) await storeEvent(tdb.db, source, typeOf(event), event, `k${i}_${Math.random()}`);
    await drain(testWorker(tdb.db, { handlers: createDefaultHandlers({ providers }) }).worker);
    const statuses = await tdb.db.query<{ status: string }>('SELECT status FROM hookrun.webhook_events');
    expect(statuses.map((s) => s.status)).toEqual(events.map(() => 'processed'));
  }

  it('Paddle subscriptions: newest updated_at wins whatever the order, canceled stays canceled, provider paddle', async () => {
    const events = [
      paddle('subscription.updated', 'sub_01', 'past_due', 20),
      paddle('subscription.created', 'sub_01', 'active', 0),
      paddle('subscription.updated', 'sub_01', 'active', 10),
    ];
    events.push(paddle('subscription.canceled', 'sub_02', 'canceled', 5), paddle('subscription.updated', 'sub_02', 'active', 5));
    await process({ payments: 'paddle', auth: 'clerk' }, 'payments', events, (e) => String(e.event_type));
    const rows = await tdb.db.query<{ id: string; status: string; customer_id: string; provider: string }>(
      'SELECT id, status, customer_id, provider FROM hookrun.subscriptions ORDER BY id',
    );
    expect(rows).toEqual([
      { id: 'sub_01', status: 'past_due', customer_id: 'ctm_01', provider: 'paddle' },
      { id: 'sub_02', status: 'canceled', customer_id: 'ctm_01', provider: 'paddle' },
    ]);
  });

  it('Lemon Squeezy subscriptions and their customer, order-safe, provider lemonsqueezy; cancelled can be resumed', async () => {
    const events = [
      lemon('subscription_resumed', '9', 'active', 30),
      lemon('subscription_cancelled', '9', 'cancelled', 20),
      lemon('subscription_created', '9', 'active', 0),
    ];
    await process({ payments: 'lemonsqueezy', auth: 'clerk' }, 'payments', events, (e) => String((e.meta as { event_name: string }).event_name));
    expect(await tdb.db.query('SELECT id, status, customer_id, price_id, provider FROM hookrun.subscriptions')).toEqual([
      { id: '9', status: 'active', customer_id: '77', price_id: '5', provider: 'lemonsqueezy' },
    ]);
    expect(await tdb.db.query('SELECT id, email, provider FROM hookrun.customers')).toEqual([{ id: '77', email: 'ada@example.com', provider: 'lemonsqueezy' }]);
  });

  it('WorkOS users: newest update wins, a delete is final, provider workos', async () => {
    const events = [
      workos('user.updated', 'user_01', 'new@example.com', 10),
      workos('user.created', 'user_01', 'old@example.com', 0),
      workos('user.deleted', 'user_02', 'gone@example.com', 5),
      workos('user.created', 'user_02', 'gone@example.com', 1),
    ];
    await process({ payments: 'stripe', auth: 'workos' }, 'auth', events, (e) => String(e.event));
    const rows = await tdb.db.query<{ id: string; email: string | null; deleted: boolean; provider: string }>(
      'SELECT id, email, deleted_at IS NOT NULL AS deleted, provider FROM hookrun.users ORDER BY id',
    );
    expect(rows).toEqual([
      { id: 'user_01', email: 'new@example.com', deleted: false, provider: 'workos' },
      // The delete came first: a tombstone; the older create cannot fill it in or bring it back.
      { id: 'user_02', email: null, deleted: true, provider: 'workos' },
    ]);
  });
});
