import { markCustomerDeleted, PAYMENTS_MIRROR } from '../../db/payments-mirror.js';
import { describeScope, StripeObjectMissing, type StripeAccountScope, type StripeApi } from '../../payments-api/stripe-client.js';
import { MalformedPayloadError, parsePayload, type HandlerContext, type HandlerTable } from '../../deliveries/registry.js';
import { checkKeyMode } from './stripe-thin-events.js';
import { checkoutSession, customer, envelope, invoice, invoiceSubscriptionId, subscription, subscriptionState } from './stripe-objects.js';
import { z } from 'zod';

/**
 * "Sync from the API on every event": with STRIPE_SECRET_KEY each payments
 * event only names the objects it touches; the handler fetches their current
 * state and stores that, so delivery order and same-second ties stop
 * mattering. A write is ordered by when its fetch started (ms): whichever
 * fetch began last wins, and every change is followed by an event whose
 * fetch begins after it. A deleted customer, or a 404 `resource_missing`
 * when the key's mode (test/live) is the event's `livemode`, is applied as a
 * delete; a key of the other mode, an event without `livemode` or any other
 * API failure throws, and the event is retried like any handler error: no
 * API error alone makes anything terminal. A Connect event's objects are
 * fetched in its connected account (`accountScopeOf`), and a fetch that
 * finds an object live again (newer than the 404 or `deleted` that marked
 * it) revives its row: what the API shows now is the mirror's state.
 */

const eventAccount = z.object({ object: z.string().nullish(), account: z.string().min(1).nullish(), context: z.string().min(1).nullish() });

/**
 * The connected account an event's objects live in: a snapshot event's
 * top-level `account` (`Stripe-Account`), a thin event's `context`
 * (`Stripe-Context`); none for the platform's own events. Without it the
 * platform's key gets 404 for every object of a connected account.
 */
function accountScopeOf(ctx: HandlerContext): StripeAccountScope {
  const { object, account, context } = parsePayload(eventAccount, ctx.event);
  if (object === 'v2.core.event') return context ? { stripeContext: context } : {};
  return account ? { stripeAccount: account } : {};
}

/**
 * Fetch an object for this event, or null when Stripe says it is gone. A
 * test key cannot see live objects (and the reverse): its 404 says nothing
 * about the object, so a mode mismatch fails before any request.
 */
export async function fetchForEvent(
  ctx: HandlerContext,
  api: StripeApi,
  fetch: () => Promise<Record<string, unknown> | null | undefined>,
): Promise<Record<string, unknown> | null> {
  const mode = checkKeyMode(ctx.event, api);
  try {
    return (await fetch()) ?? null;
  } catch (error) {
    if (!(error instanceof StripeObjectMissing) || mode === undefined) {
      if (error instanceof StripeObjectMissing)
        throw new Error(
          `${error.message}, but event ${ctx.event.key} has no livemode, so a key of the other mode cannot be ruled out: nothing was changed; the event is retried.`,
          { cause: error },
        );
      throw error;
    }
    return null;
  }
}

const subscriptionRef = envelope(subscription.pick({ id: true, customer: true }));

/** An object the API returned, checked like a payload: what the handler cannot read is `MalformedPayloadError`. */
export function parseObject<S extends z.ZodType>(schema: S, object: unknown, what: string): z.output<S> {
  const result = schema.safeParse(object);
  if (result.success) return result.data;
  const problems = result.error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
    .join('; ');
  throw new MalformedPayloadError(`The Stripe API returned a ${what} hookrun cannot read: ${problems}`);
}

/** Store the customer as the API has it now (a deleted one marked deleted), ordered by when the fetch began. */
export async function syncCustomer(ctx: HandlerContext, api: StripeApi, id: string, userId: string | null): Promise<void> {
  const at = new Date(ctx.clock.now());
  const scope = accountScopeOf(ctx);
  const fetched = await fetchForEvent(ctx, api, () => api.retrieveCustomer(id, scope));
  if (!fetched) {
    ctx.log.info({ eventId: ctx.event.id, customer: id }, `Stripe says the customer is deleted${describeScope(scope)}: marked deleted`);
    await markCustomerDeleted(ctx.db, { id, at });
    return;
  }
  const current = parseObject(customer, fetched, 'customer');
  ctx.batch.of(PAYMENTS_MIRROR).customer({ id, email: current.email ?? null, userId, at, readFromApi: true });
}

/** Store the subscription as the API has it now (a missing one canceled), ordered by when the fetch began. */
export async function syncSubscription(ctx: HandlerContext, api: StripeApi, id: string, customerId: string | null): Promise<void> {
  const at = new Date(ctx.clock.now());
  const scope = accountScopeOf(ctx);
  const fetched = await fetchForEvent(ctx, api, () => api.retrieveSubscription(id, scope));
  const mirror = ctx.batch.of(PAYMENTS_MIRROR);
  if (!fetched) {
    ctx.log.info({ eventId: ctx.event.id, subscription: id }, `Stripe has no such subscription${describeScope(scope)}: marked canceled`);
    mirror.subscription({ id, customerId, status: 'canceled', priceId: null, currentPeriodEnd: null, cancelAtPeriodEnd: null, at, readFromApi: true });
    return;
  }
  mirror.subscription({ ...subscriptionState(parseObject(subscription, fetched, 'subscription'), at), readFromApi: true });
}

/** The payments handlers in API mode: same event types, state from `GET /v1/customers|subscriptions/:id`. */
export function createSyncedStripeMirrorHandlers(api: StripeApi): HandlerTable {
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
