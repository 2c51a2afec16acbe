import type { StripeApi } from '../../payments-api/stripe-client.js';
import { MalformedPayloadError, type EventHandler, type HandlerContext, type HandlerTable } from '../../deliveries/registry.js';
import { fetchForEvent, parseObject, syncCustomer, syncSubscription } from './stripe-mirror-sync.js';
import { checkoutSession, invoice, invoiceSubscriptionId } from './stripe-objects.js';
import { readyToFetch } from './stripe-thin-events.js';

/**
 * The payments mirror from Stripe thin events (event destinations): the
 * `v1.` twins of the snapshot types it handles. A thin event names its
 * object (`related_object`) and carries none of it, so each handler applies
 * the API's current state with the same rule as stripe-mirror-sync.ts (order
 * by when the fetch began; gone means deleted or canceled). Stripe publishes
 * thin events for all six; without STRIPE_SECRET_KEY each fails (and is
 * retried) saying the key is needed, as nothing can be mirrored without it.
 */

/** The related object a thin event names, checked to be of the kind the handler expects. */
function relatedObject(ctx: HandlerContext, api: StripeApi | undefined, kind: string): { api: StripeApi; id: string } {
  const ready = readyToFetch(ctx.event, api, true);
  const related = (ctx.event.payload as { related_object: { id: string; type: string } }).related_object;
  if (related.type !== kind) {
    throw new MalformedPayloadError(`Stripe thin event ${ctx.event.key} (${ctx.event.type}) names a ${related.type}, not a ${kind}: hookrun cannot mirror it.`);
  }
  return { api: ready, id: related.id };
}

/** The related object as the API has it now (`GET related_object.url`), or null when Stripe says it is gone. */
async function fetchRelated(ctx: HandlerContext, api: StripeApi): Promise<Record<string, unknown> | null> {
  return fetchForEvent(ctx, api, () => api.retrieveRelatedObject(ctx.event.payload));
}

const onSubscription =
  (stripe: StripeApi | undefined): EventHandler =>
  async (ctx) => {
    const { api, id } = relatedObject(ctx, stripe, 'subscription');
    await syncSubscription(ctx, api, id, null);
  };

const onInvoice =
  (stripe: StripeApi | undefined): EventHandler =>
  async (ctx) => {
    const { api, id } = relatedObject(ctx, stripe, 'invoice');
    const fetched = await fetchRelated(ctx, api);
    if (!fetched) {
      ctx.log.info({ eventId: ctx.event.id, invoice: id }, 'Stripe has no such invoice any more: nothing to mirror');
      return;
    }
    const inv = parseObject(invoice, fetched, 'invoice');
    if (inv.customer) await syncCustomer(ctx, api, inv.customer, null);
    const subscriptionId = invoiceSubscriptionId(inv);
    if (subscriptionId) await syncSubscription(ctx, api, subscriptionId, inv.customer ?? null);
  };

const onCheckout =
  (stripe: StripeApi | undefined): EventHandler =>
  async (ctx) => {
    const { api, id } = relatedObject(ctx, stripe, 'checkout.session');
    const fetched = await fetchRelated(ctx, api);
    const session = fetched && parseObject(checkoutSession, fetched, 'checkout session');
    if (!session?.customer) {
      ctx.log.debug({ eventId: ctx.event.id, session: id }, 'checkout session gone or without a customer: nothing to mirror');
      return;
    }
    await syncCustomer(ctx, api, session.customer, session.client_reference_id ?? null);
  };

/** The payments mirror's thin-event handlers, by thin type; `api` is the service's client (STRIPE_SECRET_KEY), if any. */
export function createThinStripeMirrorHandlers(api: StripeApi | undefined): HandlerTable {
  return {
    'v1.checkout.session.completed': onCheckout(api),
    'v1.customer.subscription.created': onSubscription(api),
    'v1.customer.subscription.updated': onSubscription(api),
    'v1.customer.subscription.deleted': onSubscription(api),
    'v1.invoice.paid': onInvoice(api),
    'v1.invoice.payment_failed': onInvoice(api),
  };
}
