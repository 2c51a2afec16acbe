import { PAYMENTS_MIRROR } from '../../db/payments-mirror.js';
import type { StripeApi } from '../../payments-api/stripe-client.js';
import { createSyncedStripeMirrorHandlers } from './stripe-mirror-sync.js';
import { createThinStripeMirrorHandlers } from './stripe-mirror-thin.js';
import { parsePayload, type HandlerContext, type HandlerTable } from '../../deliveries/registry.js';
import { checkoutSession, envelope, fromSeconds, invoice, invoiceSubscriptionId, subscription, subscriptionState } from './stripe-objects.js';

/**
 * Stripe (payment provider) events → customers, subscriptions, from what the
 * event says. Stripe objects carry no update time, so the event's `created`
 * (seconds) orders them; two events of one object in the same second are
 * applied in processing order, except that `canceled` is never undone.
 * With STRIPE_SECRET_KEY the handlers ask the API instead (stripe-mirror-sync.ts).
 * https://docs.stripe.com/billing/subscriptions/webhooks
 */

const checkoutSchema = envelope(checkoutSession);
const subscriptionSchema = envelope(subscription);
const invoiceSchema = envelope(invoice);

async function checkoutCompleted(ctx: HandlerContext): Promise<void> {
  const { created, data } = parsePayload(checkoutSchema, ctx.event);
  const session = data.object;
  if (!session.customer) {
    ctx.log.debug({ eventId: ctx.event.id }, 'checkout session without a customer: nothing to mirror');
    return;
  }
  ctx.batch.of(PAYMENTS_MIRROR).customer({
    id: session.customer,
    email: session.customer_details?.email ?? session.customer_email ?? null,
    userId: session.client_reference_id ?? null,
    at: fromSeconds(created),
  });
}

function subscriptionHandler(forcedStatus?: string) {
  return async (ctx: HandlerContext): Promise<void> => {
    const { created, data } = parsePayload(subscriptionSchema, ctx.event);
    ctx.batch.of(PAYMENTS_MIRROR).subscription(subscriptionState(data.object, fromSeconds(created), forcedStatus));
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
    const inv = data.object;
    const at = fromSeconds(created);
    const mirror = ctx.batch.of(PAYMENTS_MIRROR);
    if (inv.customer) mirror.customer({ id: inv.customer, email: inv.customer_email ?? null, userId: null, at });
    const subscriptionId = invoiceSubscriptionId(inv);
    if (subscriptionId) mirror.transition({ id: subscriptionId, fromStatuses, toStatus, at });
  };
}

/** The payment provider's handlers by Stripe event type, ordered by each event's `created`. */
export const stripeMirrorHandlers: HandlerTable = {
  'checkout.session.completed': checkoutCompleted,
  'customer.subscription.created': subscriptionHandler(),
  'customer.subscription.updated': subscriptionHandler(),
  'customer.subscription.deleted': subscriptionHandler('canceled'),
  'invoice.paid': invoiceHandler(['past_due', 'unpaid', 'incomplete'], 'active'),
  'invoice.payment_failed': invoiceHandler(['active', 'trialing'], 'past_due'),
};

/**
 * The payments handlers: synced from the Stripe API when a client is given,
 * else from the events alone; thin events (`v1.…`) always through the API
 * (stripe-mirror-thin.ts: they fail saying STRIPE_SECRET_KEY is needed without one).
 */
export function createStripeMirrorHandlers(api?: StripeApi): HandlerTable {
  return { ...(api ? createSyncedStripeMirrorHandlers(api) : stripeMirrorHandlers), ...createThinStripeMirrorHandlers(api) };
}
