import { z } from 'zod';
import { PAYMENTS_MIRROR } from '../../db/payments-mirror.js';
import { isoDate } from './iso-date.js';
import { parsePayload, type HandlerContext, type HandlerTable } from '../../deliveries/registry.js';

/*
 * Lemon Squeezy subscriptions → `subscriptions` and `customers` (with
 * `provider` set), through the same order-safe writes as Stripe's: each
 * object's own `updated_at` orders them. Lemon Squeezy's `cancelled` is not
 * final (a subscription can be resumed until it ends), so it is stored as
 * Lemon Squeezy spells it.
 */

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

/** What this mirror reads of Lemon Squeezy's subscription events, so test/webhooks/published checks it against the published SDK's types. */
export const LEMONSQUEEZY_PAYLOADS = { subscription: lemonSubscription };

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
export const lemonSqueezyMirrorHandlers: HandlerTable = Object.fromEntries(
  ['created', 'updated', 'cancelled', 'resumed', 'expired', 'paused', 'unpaused', 'payment_success', 'payment_failed', 'payment_recovered'].map((s) => [
    `subscription_${s}`,
    lemonSubscriptionHandler,
  ]),
);
