import { z } from 'zod';
import { transitionSubscription, upsertCustomer, upsertSubscription } from '../../db/mirror.js';
import { parsePayload, type HandlerContext, type HandlerTable } from './registry.js';

/**
 * Stripe (payment provider) events → customers, subscriptions. Stripe objects
 * carry no update time, so the event's `created` (seconds) orders them.
 * https://docs.stripe.com/billing/subscriptions/webhooks
 */

const id = z.string().min(1);
/** An id field Stripe may send as a string or, when expanded, as an object with an id. */
const ref = z.union([id, z.object({ id })]).transform((value) => (typeof value === 'string' ? value : value.id));
const epochSeconds = z.number().int().nonnegative();

const envelope = <T extends z.ZodType>(object: T) =>
  z.object({ created: epochSeconds, data: z.object({ object }) });

const checkoutSchema = envelope(
  z.object({
    customer: ref.nullish(),
    customer_details: z.object({ email: z.string().nullish() }).nullish(),
    customer_email: z.string().nullish(),
    client_reference_id: z.string().nullish(),
  }),
);

const subscriptionSchema = envelope(
  z.object({
    id,
    customer: ref,
    status: z.string().min(1),
    cancel_at_period_end: z.boolean().nullish(),
    /** Older API versions keep the period on the subscription, newer ones (2025-03-31+) on each item. */
    current_period_end: epochSeconds.nullish(),
    items: z
      .object({ data: z.array(z.object({ price: z.object({ id }).nullish(), current_period_end: epochSeconds.nullish() })) })
      .nullish(),
  }),
);

const invoiceSchema = envelope(
  z.object({
    customer: ref.nullish(),
    customer_email: z.string().nullish(),
    /** Older API versions: `subscription`; 2025-03-31+: `parent.subscription_details.subscription`. */
    subscription: ref.nullish(),
    parent: z.object({ subscription_details: z.object({ subscription: ref.nullish() }).nullish() }).nullish(),
  }),
);

const fromSeconds = (seconds: number) => new Date(seconds * 1000);

async function checkoutCompleted(ctx: HandlerContext): Promise<void> {
  const { created, data } = parsePayload(checkoutSchema, ctx.event);
  const session = data.object;
  if (!session.customer) {
    ctx.log.debug({ eventId: ctx.event.id }, 'checkout session without a customer: nothing to mirror');
    return;
  }
  await upsertCustomer(ctx.db, {
    id: session.customer,
    email: session.customer_details?.email ?? session.customer_email ?? null,
    userId: session.client_reference_id ?? null,
    at: fromSeconds(created),
  });
}

function subscriptionHandler(forcedStatus?: string) {
  return async (ctx: HandlerContext): Promise<void> => {
    const { created, data } = parsePayload(subscriptionSchema, ctx.event);
    const sub = data.object;
    const item = sub.items?.data[0];
    const periodEnd = item?.current_period_end ?? sub.current_period_end;
    await upsertSubscription(ctx.db, {
      id: sub.id,
      customerId: sub.customer,
      status: forcedStatus ?? sub.status,
      priceId: item?.price?.id ?? null,
      currentPeriodEnd: periodEnd != null ? fromSeconds(periodEnd) : null,
      cancelAtPeriodEnd: sub.cancel_at_period_end ?? null,
      at: fromSeconds(created),
    });
  };
}

/**
 * Invoice outcomes: both record the customer's email (`customer_email`), and
 * move a known subscription the way Stripe does: `invoice.paid` lifts
 * past_due/unpaid/incomplete to active; `invoice.payment_failed` makes an
 * active or trialing subscription past_due. Stripe also sends
 * `customer.subscription.updated` for these changes; whichever is newer wins.
 */
function invoiceHandler(fromStatuses: string[], toStatus: string) {
  return async (ctx: HandlerContext): Promise<void> => {
    const { created, data } = parsePayload(invoiceSchema, ctx.event);
    const invoice = data.object;
    const at = fromSeconds(created);
    if (invoice.customer) {
      await upsertCustomer(ctx.db, { id: invoice.customer, email: invoice.customer_email ?? null, userId: null, at });
    }
    const subscriptionId = invoice.subscription ?? invoice.parent?.subscription_details?.subscription;
    if (subscriptionId) await transitionSubscription(ctx.db, { id: subscriptionId, fromStatuses, toStatus, at });
  };
}

/** The payment provider's handlers by Stripe event type. */
export const paymentsHandlers: HandlerTable = {
  'checkout.session.completed': checkoutCompleted,
  'customer.subscription.created': subscriptionHandler(),
  'customer.subscription.updated': subscriptionHandler(),
  'customer.subscription.deleted': subscriptionHandler('canceled'),
  'invoice.paid': invoiceHandler(['past_due', 'unpaid', 'incomplete'], 'active'),
  'invoice.payment_failed': invoiceHandler(['active', 'trialing'], 'past_due'),
};
