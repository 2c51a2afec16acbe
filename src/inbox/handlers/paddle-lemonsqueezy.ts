import { z } from 'zod';
import { PAYMENTS_MIRROR } from '../../db/payments-mirror.js';
import { parsePayload, type HandlerContext, type HandlerTable } from './registry.js';

/**
 * Paddle Billing and Lemon Squeezy subscriptions → `subscriptions` and
 * `customers` (with `provider` set), through the same order-safe writes as
 * Stripe's: each object's own `updated_at` orders them, so events may arrive
 * in any order and any number of times. Paddle's `canceled` is final (as
 * Stripe's); Lemon Squeezy's `cancelled` is not (a subscription can be
 * resumed until it ends), so it is stored as Lemon Squeezy spells it.
 */

const isoDate = z.string().min(1).transform((value, ctx) => {
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) ctx.addIssue({ code: 'custom', message: `not a date: ${value}` });
  return date;
});

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
export const paddleHandlers: HandlerTable = Object.fromEntries([
  ...['created', 'updated', 'activated', 'canceled', 'past_due', 'paused', 'resumed', 'trialing'].map((s) => [`subscription.${s}`, paddleSubscriptionHandler]),
  ...['created', 'updated'].map((s) => [`customer.${s}`, paddleCustomerHandler]),
]);

const lemonSubscription = z.object({
  data: z.object({
    id: z.union([z.string(), z.number()]).transform(String),
    attributes: z.object({
      status: z.string().min(1),
      customer_id: z.union([z.string(), z.number()]).transform(String).nullish(),
      user_email: z.string().nullish(),
      variant_id: z.union([z.string(), z.number()]).transform(String).nullish(),
      renews_at: isoDate.nullish(),
      ends_at: isoDate.nullish(),
      cancelled: z.boolean().nullish(),
      updated_at: isoDate,
    }),
  }),
});

async function lemonSubscriptionHandler(ctx: HandlerContext): Promise<void> {
  const { data } = parsePayload(lemonSubscription, ctx.event);
  const a = data.attributes;
  const mirror = ctx.batch.of(PAYMENTS_MIRROR);
  if (a.customer_id) mirror.customer({ id: a.customer_id, email: a.user_email ?? null, userId: null, at: a.updated_at, provider: 'lemonsqueezy' });
  mirror.subscription({
    id: data.id,
    customerId: a.customer_id ?? null,
    status: a.status,
    priceId: a.variant_id ?? null,
    currentPeriodEnd: a.ends_at ?? a.renews_at ?? null,
    cancelAtPeriodEnd: a.cancelled ?? null,
    at: a.updated_at,
    provider: 'lemonsqueezy',
  });
}

/** Lemon Squeezy's subscription events by `meta.event_name` (PAYMENTS_PROVIDER=lemonsqueezy). https://docs.lemonsqueezy.com/help/webhooks/event-types */
export const lemonSqueezyHandlers: HandlerTable = Object.fromEntries(
  ['created', 'updated', 'cancelled', 'resumed', 'expired', 'paused', 'unpaused', 'payment_success', 'payment_failed', 'payment_recovered'].map((s) => [`subscription_${s}`, lemonSubscriptionHandler]),
);
