import { z } from 'zod';
import { PAYMENTS_MIRROR } from '../../db/payments-mirror.js';
import { isoDate } from './iso-date.js';
import { parsePayload, type HandlerContext, type HandlerTable } from '../../deliveries/registry.js';

/*
 * Paddle Billing subscriptions and customers → `subscriptions` and
 * `customers` (with `provider` set), through the same order-safe writes as
 * Stripe's: each object's own `updated_at` orders them, so events may arrive
 * in any order and any number of times. Paddle's `canceled` is final (as
 * Stripe's).
 */

const paddleSubscription = z.object({
  data: z.object({
    id: z.string().min(1),
    status: z.string().min(1),
    customer_id: z.string().nullish(),
    updated_at: isoDate,
    items: z.array(z.object({ price: z.object({ id: z.string() }).nullish() })).nullish(),
    current_billing_period: z.object({ ends_at: isoDate }).nullish(),
    scheduled_change: z.object({ action: z.string() }).nullish(),
  }),
});

const paddleCustomer = z.object({ data: z.object({ id: z.string().min(1), email: z.string().nullish(), updated_at: isoDate }) });

/** What this mirror reads of Paddle's notifications, so test/webhooks/published checks it against @paddle/paddle-node-sdk's published types. */
export const PADDLE_PAYLOADS = { subscription: paddleSubscription, customer: paddleCustomer };

async function paddleSubscriptionHandler(ctx: HandlerContext): Promise<void> {
  const { data } = parsePayload(paddleSubscription, ctx.event);
  ctx.batch.of(PAYMENTS_MIRROR).subscription({
    id: data.id,
    customerId: data.customer_id ?? null,
    status: data.status,
    priceId: data.items?.[0]?.price?.id ?? null,
    currentPeriodEnd: data.current_billing_period?.ends_at ?? null,
    cancelAtPeriodEnd: data.scheduled_change ? data.scheduled_change.action === 'cancel' : false,
    at: data.updated_at,
    provider: 'paddle',
  });
}

async function paddleCustomerHandler(ctx: HandlerContext): Promise<void> {
  const { data } = parsePayload(paddleCustomer, ctx.event);
  ctx.batch.of(PAYMENTS_MIRROR).customer({ id: data.id, email: data.email ?? null, userId: null, at: data.updated_at, provider: 'paddle' });
}

/** Paddle's notifications by `event_type` (PAYMENTS_PROVIDER=paddle). https://developer.paddle.com/webhooks/subscriptions */
export const paddleMirrorHandlers: HandlerTable = Object.fromEntries([
  ...['created', 'updated', 'activated', 'canceled', 'past_due', 'paused', 'resumed', 'trialing'].map((s) => [`subscription.${s}`, paddleSubscriptionHandler]),
  ...['created', 'updated'].map((s) => [`customer.${s}`, paddleCustomerHandler]),
]);
