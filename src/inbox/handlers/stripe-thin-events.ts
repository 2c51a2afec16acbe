import type Stripe from 'stripe';
import { z } from 'zod';
import type { StripeThinEventFetchers } from '../../api/stripe-thin-events.js';
import type { ClaimedEvent } from '../../deliveries/claimed.js';
import type { StripeApi, StripeMode } from '../../payments-api/stripe-client.js';
import { MalformedPayloadError, parsePayload } from '../../deliveries/registry.js';

/**
 * Stripe thin events (`object: "v2.core.event"`): stored like any Stripe
 * event (key `id`, type `type`), acted on by fetching what they name with
 * stripe-node's event-notification API through the service's one client.
 */

type UnknownEventNotification = Stripe.V2.Core.Events.UnknownEventNotification;
type ThinEventRef = Pick<ClaimedEvent, 'key' | 'source' | 'type' | 'payload'>;

const eventMode = z.object({ livemode: z.boolean().nullish() });
const thinShape = z.object({
  object: z.string().nullish(),
  related_object: z.object({ id: z.string().min(1), type: z.string().min(1), url: z.string().min(1) }).nullish(),
});

/** Whether a stored Stripe payload is a thin event (event destinations) rather than a snapshot one. */
export const isThinEvent = (payload: unknown): boolean => (payload as { object?: unknown } | null)?.object === 'v2.core.event';

/**
 * The error of a thin event met without STRIPE_SECRET_KEY. A plain Error, so
 * the delivery is retried with backoff, not sent to dead: the event is sound
 * and only the configuration is missing. Set the key and restart, and the
 * retries still queued succeed on their own (a thin event fetches the
 * object's current state, so acting late loses nothing); once the attempts
 * run out it is dead and alerted, and `hookrun events replay` brings it back.
 */
export function stripeKeyNeeded(event: Pick<ClaimedEvent, 'key' | 'type'>): Error {
  return new Error(
    `Stripe thin event ${event.key} (${event.type}) carries no object, and fetching it needs STRIPE_SECRET_KEY (a secret or restricted key that can read it): set it and restart hookrun; the event is retried.`,
  );
}

/**
 * The event's mode (`livemode`), after checking the key can see it: a test
 * key cannot read live objects (and the reverse), so its 404 would say
 * nothing; a mismatch fails before any request and is retried.
 */
export function checkKeyMode(event: ThinEventRef, api: StripeApi): StripeMode | undefined {
  const livemode = parsePayload(eventMode, event as ClaimedEvent).livemode;
  const mode = livemode === true ? 'live' : livemode === false ? 'test' : undefined;
  if (mode !== undefined && mode !== api.keyMode) {
    throw new Error(
      `STRIPE_SECRET_KEY is a ${api.keyMode}-mode key but event ${event.key} is ${mode}-mode (livemode: ${livemode}): the API cannot see its objects, so nothing was changed. Set the account's ${mode}-mode key (sk_${mode}_… or rk_${mode}_…); the event is retried.`,
    );
  }
  return mode;
}

/**
 * Check a thin event can be fetched for: it is a thin event, it names an
 * object when one is asked for (else `MalformedPayloadError`: dead at once,
 * since no retry can add it), the key exists and is of the event's mode.
 */
export function readyToFetch(event: ThinEventRef, api: StripeApi | undefined, related: boolean): StripeApi {
  const thin = parsePayload(thinShape, event as ClaimedEvent);
  if (thin.object !== 'v2.core.event') {
    throw new Error(
      `${event.source} event ${event.key} (${event.type}) is a snapshot event (object: ${JSON.stringify(thin.object ?? null)}): its object is in the payload's data.object; ctx.stripe fetches only for thin events (object: "v2.core.event").`,
    );
  }
  if (related && !thin.related_object) {
    throw new MalformedPayloadError(
      `Stripe thin event ${event.key} (${event.type}) has no related_object (id, type, url): there is no object to fetch, and no retry can add one. Use ctx.stripe.fetchEvent() for events without one.`,
    );
  }
  if (!api) throw stripeKeyNeeded(event);
  checkKeyMode(event, api);
  return api;
}

/**
 * `ctx.stripe` of a project handler: stripe-node's `fetchEvent` and
 * `fetchRelatedObject` of this event, checked first (see `readyToFetch`).
 */
export function stripeThinFetchers(event: ThinEventRef, api: StripeApi | undefined): StripeThinEventFetchers<never> {
  const notification = async (related: boolean) => (await readyToFetch(event, api, related).thinEvent(event.payload)) as UnknownEventNotification;
  return {
    fetchEvent: async () => (await (await notification(false)).fetchEvent()) as never,
    fetchRelatedObject: async () => (await (await notification(true)).fetchRelatedObject()) as never,
  };
}
