import { randomBytes } from 'node:crypto';
import Stripe from 'stripe';
import { deepMerge } from '../src/webhooks/sample-events/ids.js';
import { buildClerkSample } from '../src/webhooks/sample-events/clerk.js';

/** The signing secret the bench configures hookrun with (a test value, not a real key). */
export const BENCH_SECRET = 'whsec_bench_0123456789abcdefghijklmnopqrstuv';

/** One pre-built delivery: the exact bytes Stripe would send and its signature header. */
export interface SignedEvent {
  id: string;
  body: string;
  signature: string;
}

const TYPES = [
  'customer.subscription.updated',
  'invoice.paid',
  'customer.subscription.created',
  'checkout.session.completed',
  'invoice.payment_failed',
  'customer.subscription.deleted',
] as const;

/**
 * This run's id prefix, ending in a letter: with the 14 padded characters
 * after it, an id never holds 16 digits in a row. A random hex prefix ends in
 * two digits 39 % of the time, and then a third of the ids did, which sent
 * most payloads to the exact-integer parser (db/stored-payload.ts) on one run
 * and not the next.
 */
const run = `${randomBytes(4).toString('hex')}x`;
let sequence = 0;

function stripeId(prefix: string, n: number): string {
  return `${prefix}_${run}${n.toString(36).padStart(14, '0')}`;
}

/** A data.object shaped like the real one for `type` (fields Stripe sends, trimmed to ~1.5 KB events). */
function objectFor(type: string, n: number, created: number): Record<string, unknown> {
  const customer = stripeId('cus', n % 5000);
  const subscription = stripeId('sub', n % 20000);
  const price = {
    id: 'price_1PbenchPro',
    object: 'price',
    active: true,
    currency: 'usd',
    product: 'prod_QbenchPro',
    recurring: { interval: 'month', interval_count: 1, usage_type: 'licensed' },
    type: 'recurring',
    unit_amount: 2900,
  };
  if (type.startsWith('customer.subscription.')) {
    return {
      id: subscription,
      object: 'subscription',
      billing_cycle_anchor: created,
      cancel_at: null,
      cancel_at_period_end: false,
      canceled_at: type.endsWith('deleted') ? created : null,
      collection_method: 'charge_automatically',
      created: created - 86_400,
      currency: 'usd',
      current_period_end: created + 2_592_000,
      current_period_start: created,
      customer,
      items: {
        object: 'list',
        data: [{ id: stripeId('si', n), object: 'subscription_item', created: created - 86_400, price, quantity: 1, subscription }],
        has_more: false,
        total_count: 1,
      },
      latest_invoice: stripeId('in', n),
      livemode: false,
      metadata: { plan: 'pro', seats: String(1 + (n % 9)) },
      status: type.endsWith('deleted') ? 'canceled' : 'active',
      trial_end: null,
      trial_start: null,
    };
  }
  if (type.startsWith('invoice.')) {
    const paid = type === 'invoice.paid';
    return {
      id: stripeId('in', n),
      object: 'invoice',
      account_country: 'US',
      amount_due: 2900,
      amount_paid: paid ? 2900 : 0,
      amount_remaining: paid ? 0 : 2900,
      attempt_count: 1,
      billing_reason: 'subscription_cycle',
      collection_method: 'charge_automatically',
      created,
      currency: 'usd',
      customer,
      customer_email: `user${n % 5000}@example.com`,
      hosted_invoice_url: `https://invoice.stripe.com/i/acct_1Pbench/test_${n.toString(36)}`,
      lines: {
        object: 'list',
        data: [
          {
            id: stripeId('il', n),
            object: 'line_item',
            amount: 2900,
            currency: 'usd',
            description: '1 × Pro (at $29.00 / month)',
            period: { end: created + 2_592_000, start: created },
            quantity: 1,
          },
        ],
        has_more: false,
        total_count: 1,
      },
      livemode: false,
      number: `BENCH-${n}`,
      paid,
      period_end: created,
      period_start: created - 2_592_000,
      status: paid ? 'paid' : 'open',
      subscription,
      subtotal: 2900,
      total: 2900,
    };
  }
  return {
    id: stripeId('cs', n),
    object: 'checkout.session',
    amount_subtotal: 2900,
    amount_total: 2900,
    cancel_url: 'https://example.com/pricing',
    client_reference_id: `user_${n % 5000}`,
    created,
    currency: 'usd',
    customer,
    customer_details: {
      address: { city: 'Portland', country: 'US', line1: '1 Main St', postal_code: '97201', state: 'OR' },
      email: `user${n % 5000}@example.com`,
      name: `Bench User ${n % 5000}`,
    },
    expires_at: created + 86_400,
    livemode: false,
    mode: 'subscription',
    payment_status: 'paid',
    status: 'complete',
    subscription,
    success_url: 'https://example.com/welcome?session_id={CHECKOUT_SESSION_ID}',
    url: null,
  };
}

/** Build `count` distinct Stripe events, pretty-printed as Stripe sends them, each signed now with Stripe's own helper. */
export function makeSignedEvents(count: number, secret: string = BENCH_SECRET): SignedEvent[] {
  const out: SignedEvent[] = new Array(count);
  const now = Math.floor(Date.now() / 1000);
  for (let i = 0; i < count; i++) {
    const n = sequence++;
    const type = TYPES[n % TYPES.length]!;
    const id = stripeId('evt', n);
    const event = {
      id,
      object: 'event',
      api_version: '2024-06-20',
      created: now - 1,
      data: { object: objectFor(type, n, now - 1) },
      livemode: false,
      pending_webhooks: 1,
      request: { id: stripeId('req', n), idempotency_key: `bench-${run}-${n}` },
      type,
    };
    const body = JSON.stringify(event, null, 2);
    out[i] = { id, body, signature: Stripe.webhooks.generateTestHeaderString({ payload: body, secret, timestamp: now }) };
  }
  return out;
}

/** One Clerk delivery for a backlog: its `svix-id`, type and body (written straight into the inbox, so not signed). */
export interface ClerkEvent {
  id: string;
  type: string;
  body: string;
}

/**
 * `count` Clerk events in the shipped sample shapes (`hookrun send auth`,
 * 0.3–1.2 KB): 2,000 objects (half users, a quarter organizations, a quarter
 * memberships) in turn, each created on its first turn, deleted on every
 * tenth, updated otherwise, with `updated_at`/`timestamp` a second later per
 * turn. Consecutive events are distinct objects, so a 100-event batch writes
 * each row once.
 */
export function makeClerkEvents(count: number): ClerkEvent[] {
  const out: ClerkEvent[] = new Array(count);
  const base = Date.now() - 3_600_000;
  const objectId = (prefix: string, n: number) => `${prefix}_${run}${n.toString(36).padStart(8, '0')}`;
  for (let i = 0; i < count; i++) {
    const object = i % 2000;
    const turn = Math.floor(i / 2000);
    const resource = object % 4 < 2 ? 'user' : object % 4 === 2 ? 'organization' : 'organizationMembership';
    const type = `${resource}.${turn === 0 ? 'created' : turn % 10 === 9 ? 'deleted' : 'updated'}`;
    const data =
      resource === 'organizationMembership'
        ? { id: objectId('orgmem', object), organization: { id: objectId('org', object - 1) }, public_user_data: { user_id: objectId('user', object - 3) } }
        : { id: objectId(resource === 'user' ? 'user' : 'org', object) };
    const event = deepMerge(buildClerkSample(type, base + turn * 1000), { data });
    out[i] = { id: `msg_${run}${i.toString(36).padStart(8, '0')}`, type, body: JSON.stringify(event) };
  }
  return out;
}
