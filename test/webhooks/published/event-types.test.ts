import { EventName } from '@paddle/paddle-node-sdk';
import { describe, expect, it } from 'vitest';
import { CLERK_EVENT_TYPES, STRIPE_EVENT_TYPES } from '../../../src/api/known-event-types.js';
import { clerkMirrorHandlers } from '../../../src/inbox/handlers/clerk-mirror.js';
import { paddleMirrorHandlers } from '../../../src/inbox/handlers/paddle-mirror.js';
import { stripeMirrorHandlers } from '../../../src/inbox/handlers/stripe-mirror.js';
import { encodeSample, signSample } from '../../../src/webhooks/samples.js';
import { PAYMENTS_PROVIDERS } from '../../../src/webhooks/providers/index.js';
import { createTestApp } from '../../helpers/app.js';
import { SECRETS } from '../../helpers/config.js';
import { pgliteOnly, useTestDatabase } from '../../helpers/db.js';
import { stripeDelivery, svixDelivery } from '../../helpers/signed-deliveries.js';
import { deliverAll, problems, type PublishedDelivery } from './published.js';

/*
 * Every event type the providers publish in their own packages (stripe-node's
 * `Stripe.Event`, @clerk/backend's `WebhookEvent`, @paddle/paddle-node-sdk's
 * `EventName`), posted as the provider signs it: each is received, stored
 * under its documented type and settled. The payloads are envelopes (no
 * provider publishes example bodies on npm), so the types the shipped mirrors
 * read are left to mirror-shapes.test.ts, which checks those against the
 * published schemas; every other type must be stored and `ignored`.
 */

const PADDLE_SECRET = 'pdl_ntfset_01hsecretfortests_abcdefghijklmnopqrstuvwx';
const unread = (types: readonly string[], table: object) => types.filter((type) => !(type in table));

function fromDelivery(label: string, d: { key: string; body: string; sign(nowMs: number): Record<string, string> }, type: string): PublishedDelivery {
  return { label, route: 'payments', body: d.body, headers: d.sign(Date.now()), key: d.key, type };
}

describe.each(pgliteOnly())('published event types on $name', (kind) => {
  const tdb = useTestDatabase(kind);

  it("Stripe: every type of stripe-node's Stripe.Event, signed by generateTestHeaderString", async () => {
    expect(STRIPE_EVENT_TYPES.length).toBeGreaterThan(200);
    const deliveries = unread(STRIPE_EVENT_TYPES, stripeMirrorHandlers).map((type, i) => {
      const event = { id: `evt_published_${i}`, object: 'event', api_version: '2025-03-31.basil', created: 1_750_000_000 + i, livemode: false };
      const d = stripeDelivery({ ...event, type, pending_webhooks: 1, request: { id: null, idempotency_key: null }, data: { object: { id: `obj_${i}` } } });
      return fromDelivery(`stripe ${type}`, d, type);
    });
    expect(problems(await deliverAll(createTestApp(tdb.db), tdb.db, deliveries))).toEqual([]);
  });

  it("Clerk: every type of @clerk/backend's WebhookEvent, signed as Svix signs, and deletes without an id", async () => {
    expect(CLERK_EVENT_TYPES.length).toBeGreaterThan(40);
    const envelope = (type: string, data: object) => ({ object: 'event', type, timestamp: 1_750_000_000_000, instance_id: 'ins_published', data });
    const deliveries = unread(CLERK_EVENT_TYPES, clerkMirrorHandlers).map((type, i) => ({
      ...fromDelivery(`clerk ${type}`, svixDelivery('auth', `msg_published_${i}`, envelope(type, { id: `obj_${i}` }), SECRETS.auth), type),
      route: 'auth',
    }));
    // Clerk's DeletedObjectJSON types `id` as optional: such a delete names nothing to remove, and is no malformed payload.
    for (const [i, type] of ['user.deleted', 'organization.deleted'].entries()) {
      const d = svixDelivery('auth', `msg_deleted_${i}`, envelope(type, { object: type.split('.')[0], deleted: true }), SECRETS.auth);
      deliveries.push({ ...fromDelivery(`clerk ${type} without id`, d, type), route: 'auth' });
    }
    expect(problems(await deliverAll(createTestApp(tdb.db), tdb.db, deliveries))).toEqual([]);
  });

  it('Paddle: every EventName of @paddle/paddle-node-sdk, Paddle-Signature over ts:body', async () => {
    const names = Object.values(EventName) as string[];
    expect(names.length).toBeGreaterThan(50);
    const t = createTestApp(tdb.db, { PAYMENTS_PROVIDER: 'paddle', PADDLE_WEBHOOK_SECRET: PADDLE_SECRET, PAYMENTS_WEBHOOK_SECRET: '' });
    const deliveries = unread(names, paddleMirrorHandlers).map((type, i): PublishedDelivery => {
      const key = `evt_01published${String(i).padStart(10, '0')}`;
      const event = { event_id: key, event_type: type, occurred_at: '2025-06-01T12:00:00.123456Z', notification_id: `ntf_${i}`, data: { id: `obj_${i}` } };
      const body = encodeSample('payments', event, PAYMENTS_PROVIDERS.paddle);
      return { label: `paddle ${type}`, route: 'payments', body, headers: signSample('payments', body, t.config), key, type };
    });
    const providers = { payments: 'paddle', auth: 'clerk' } as const;
    expect(problems(await deliverAll(t, tdb.db, deliveries, { providers }))).toEqual([]);
  });
});
