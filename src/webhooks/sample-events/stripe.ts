import { stripeWebhooks } from '../providers/stripe-webhooks.js';
import { providerId, samplePerson } from './ids.js';

const DAY_SECONDS = 86_400;
const MONTH_SECONDS = 30 * DAY_SECONDS;

function checkoutSession(now: number): Record<string, unknown> {
  const person = samplePerson();
  return {
    id: providerId('cs_test', 58),
    object: 'checkout.session',
    amount_subtotal: 1500,
    amount_total: 1500,
    client_reference_id: providerId('user', 27),
    created: now - 60,
    currency: 'usd',
    customer: providerId('cus', 14),
    customer_creation: 'always',
    customer_details: { address: null, email: person.email, name: `${person.firstName} ${person.lastName}`, phone: null, tax_exempt: 'none', tax_ids: [] },
    customer_email: null,
    expires_at: now + DAY_SECONDS,
    livemode: false,
    metadata: {},
    mode: 'subscription',
    payment_status: 'paid',
    status: 'complete',
    subscription: providerId('sub', 24),
    success_url: 'https://example.com/billing/success',
    url: null,
  };
}

function subscription(type: string, now: number): Record<string, unknown> {
  const start = type.endsWith('created') ? now : now - 10 * DAY_SECONDS;
  const periodEnd = start + MONTH_SECONDS;
  const subscriptionId = providerId('sub', 24);
  const deleted = type.endsWith('deleted');
  const price = {
    id: providerId('price', 24),
    object: 'price',
    active: true,
    currency: 'usd',
    product: providerId('prod', 14),
    recurring: { interval: 'month', interval_count: 1, usage_type: 'licensed' },
    type: 'recurring',
    unit_amount: 1500,
  };
  return {
    id: subscriptionId,
    object: 'subscription',
    billing_cycle_anchor: start,
    cancel_at: null,
    cancel_at_period_end: false,
    canceled_at: deleted ? now : null,
    collection_method: 'charge_automatically',
    created: start,
    currency: 'usd',
    current_period_end: periodEnd,
    current_period_start: start,
    customer: providerId('cus', 14),
    ended_at: deleted ? now : null,
    items: {
      object: 'list',
      data: [
        {
          id: providerId('si', 14),
          object: 'subscription_item',
          created: start,
          current_period_end: periodEnd,
          current_period_start: start,
          price,
          quantity: 1,
          subscription: subscriptionId,
        },
      ],
      has_more: false,
      url: `/v1/subscription_items?subscription=${subscriptionId}`,
    },
    latest_invoice: providerId('in', 24),
    livemode: false,
    metadata: {},
    start_date: start,
    status: deleted ? 'canceled' : 'active',
  };
}

function invoice(type: string, now: number): Record<string, unknown> {
  const paid = type === 'invoice.paid';
  const subscriptionId = providerId('sub', 24);
  return {
    id: providerId('in', 24),
    object: 'invoice',
    amount_due: 1500,
    amount_paid: paid ? 1500 : 0,
    amount_remaining: paid ? 0 : 1500,
    attempt_count: 1,
    attempted: true,
    billing_reason: 'subscription_cycle',
    collection_method: 'charge_automatically',
    created: now - 3600,
    currency: 'usd',
    customer: providerId('cus', 14),
    customer_email: samplePerson().email,
    hosted_invoice_url: null,
    livemode: false,
    next_payment_attempt: paid ? null : now + 3 * DAY_SECONDS,
    parent: { type: 'subscription_details', subscription_details: { metadata: {}, subscription: subscriptionId } },
    period_end: now,
    period_start: now - MONTH_SECONDS,
    status: paid ? 'paid' : 'open',
    subscription: subscriptionId,
    total: 1500,
  };
}

/**
 * A Stripe event envelope as Stripe posts it: `{id: "evt_…", object: "event",
 * api_version, created (unix seconds), data: {object}, livemode, type}`.
 * https://docs.stripe.com/api/events/object
 */
export function buildStripeSample(type: string, nowMs: number): Record<string, unknown> {
  const now = Math.floor(nowMs / 1000);
  let object: Record<string, unknown>;
  if (type === 'checkout.session.completed') object = checkoutSession(now);
  else if (type.startsWith('customer.subscription.')) object = subscription(type, now);
  else object = invoice(type, now);
  const data: Record<string, unknown> = { object };
  if (type === 'customer.subscription.updated') data.previous_attributes = { cancel_at_period_end: true };
  return {
    id: providerId('evt', 24),
    object: 'event',
    api_version: stripeWebhooks.apiVersion,
    created: now,
    data,
    livemode: false,
    pending_webhooks: 1,
    request: { id: providerId('req', 14), idempotency_key: null },
    type,
  };
}
