import { z } from 'zod';
import type { SubscriptionState } from '../../db/payments-mirror.js';

/**
 * The parts of Stripe objects the payments handlers read, shared by the
 * event path (the object inside `data.object`) and the API path (the object
 * `GET /v1/…` returns): both are the same JSON at a given API version.
 * https://docs.stripe.com/api/subscriptions/object
 */

const id = z.string().min(1);
/** An id field Stripe may send as a string or, when expanded, as an object with an id. */
export const ref = z.union([id, z.object({ id })]).transform((value) => (typeof value === 'string' ? value : value.id));
const epochSeconds = z.number().int().nonnegative();

/** The event envelope around one object: its `created` second orders events when the API is not asked. */
export const envelope = <T extends z.ZodType>(object: T) => z.object({ created: epochSeconds, data: z.object({ object }) });

export const checkoutSession = z.object({
  customer: ref.nullish(),
  customer_details: z.object({ email: z.string().nullish() }).nullish(),
  customer_email: z.string().nullish(),
  client_reference_id: z.string().nullish(),
});

export const subscription = z.object({
  id,
  customer: ref,
  status: z.string().min(1),
  cancel_at_period_end: z.boolean().nullish(),
  /** Older API versions keep the period on the subscription, newer ones (2025-03-31+) on each item. */
  current_period_end: epochSeconds.nullish(),
  items: z.object({ data: z.array(z.object({ price: z.object({ id }).nullish(), current_period_end: epochSeconds.nullish() })) }).nullish(),
});

export const invoice = z.object({
  customer: ref.nullish(),
  customer_email: z.string().nullish(),
  /** Older API versions: `subscription`; 2025-03-31+: `parent.subscription_details.subscription`. */
  subscription: ref.nullish(),
  parent: z.object({ subscription_details: z.object({ subscription: ref.nullish() }).nullish() }).nullish(),
});

export const customer = z.object({ id, email: z.string().nullish() });

/** Seconds since the epoch (Stripe's timestamps) as a Date. */
export const fromSeconds = (seconds: number) => new Date(seconds * 1000);

/** A subscription object as the mirror keeps it, ordered by `at`. */
export function subscriptionState(sub: z.output<typeof subscription>, at: Date, forcedStatus?: string): SubscriptionState {
  const item = sub.items?.data[0];
  const periodEnd = item?.current_period_end ?? sub.current_period_end;
  return {
    id: sub.id,
    customerId: sub.customer,
    status: forcedStatus ?? sub.status,
    priceId: item?.price?.id ?? null,
    currentPeriodEnd: periodEnd != null ? fromSeconds(periodEnd) : null,
    cancelAtPeriodEnd: sub.cancel_at_period_end ?? null,
    at,
  };
}

/** The subscription an invoice belongs to, wherever this API version puts it. */
export const invoiceSubscriptionId = (inv: z.output<typeof invoice>) => inv.subscription ?? inv.parent?.subscription_details?.subscription ?? null;
