import { markCustomerDeleted, PAYMENTS_MIRROR } from '../../db/payments-mirror.js';
import type { StripeApi } from '../../payments-api/stripe-client.js';
import { MalformedPayloadError, parsePayload, type HandlerContext, type HandlerTable } from './registry.js';
import { checkoutSession, customer, envelope, invoice, invoiceSubscriptionId, subscription, subscriptionState } from './stripe-objects.js';
import type { z } from 'zod';

/**
 * "Sync from the API on every event": with STRIPE_SECRET_KEY each payments
 * event only names the objects it touches; the handler fetches their current
 * state and stores that, so delivery order and same-second ties stop
 * mattering. A write is ordered by when its fetch started (ms): whichever
 * fetch began last wins, and every change is followed by an event whose
 * fetch begins after it. A 404 or a deleted customer is applied as a delete;
 * any other API failure throws, and the event is retried like any handler error.
 */

const subscriptionRef = envelope(subscription.pick({ id: true, customer: true }));

function parseObject<S extends z.ZodType>(schema: S, object: unknown, what: string): z.output<S> {
  const result = schema.safeParse(object);
  if (result.success) return result.data;
  const problems = result.error.issues.slice(0, 5).map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ');
  throw new MalformedPayloadError(`The Stripe API returned a ${what} hookrun cannot read: ${problems}`);
}

async function syncCustomer(ctx: HandlerContext, api: StripeApi, id: string, userId: string | null): Promise<void> {
  const at = new Date(ctx.clock.now());
  const fetched = await api.retrieveCustomer(id);
  if (!fetched) {
    ctx.log.info({ eventId: ctx.event.id, customer: id }, 'Stripe says the customer is deleted: marked deleted');
    await markCustomerDeleted(ctx.db, { id, at });
    return;
  }
  const current = parseObject(customer, fetched, 'customer');
  ctx.batch.of(PAYMENTS_MIRROR).customer({ id, email: current.email ?? null, userId, at });
}

async function syncSubscription(ctx: HandlerContext, api: StripeApi, id: string, customerId: string | null): Promise<void> {
  const at = new Date(ctx.clock.now());
  const fetched = await api.retrieveSubscription(id);
  if (!fetched) {
    ctx.log.info({ eventId: ctx.event.id, subscription: id }, 'Stripe has no such subscription: marked canceled');
    ctx.batch.of(PAYMENTS_MIRROR).subscription({ id, customerId, status: 'canceled', priceId: null, currentPeriodEnd: null, cancelAtPeriodEnd: null, at });
    return;
  }
  ctx.batch.of(PAYMENTS_MIRROR).subscription(subscriptionState(parseObject(subscription, fetched, 'subscription'), at));
}

/** The payments handlers in API mode: same event types, state from `GET /v1/customers|subscriptions/:id`. */
export function createSyncedPaymentsHandlers(api: StripeApi): HandlerTable {
  const onSubscription = async (ctx: HandlerContext) => {
    const { data } = parsePayload(subscriptionRef, ctx.event);
    await syncSubscription(ctx, api, data.object.id, data.object.customer);
  };
  const onInvoice = async (ctx: HandlerContext) => {
    const inv = parsePayload(envelope(invoice), ctx.event).data.object;
    if (inv.customer) await syncCustomer(ctx, api, inv.customer, null);
    const subscriptionId = invoiceSubscriptionId(inv);
    if (subscriptionId) await syncSubscription(ctx, api, subscriptionId, inv.customer ?? null);
  };
  return {
    'checkout.session.completed': async (ctx) => {
      const session = parsePayload(envelope(checkoutSession), ctx.event).data.object;
      if (session.customer) await syncCustomer(ctx, api, session.customer, session.client_reference_id ?? null);
    },
    'customer.subscription.created': onSubscription,
    'customer.subscription.updated': onSubscription,
    'customer.subscription.deleted': onSubscription,
    'invoice.paid': onInvoice,
    'invoice.payment_failed': onInvoice,
  };
}
