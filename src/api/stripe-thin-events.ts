import type Stripe from 'stripe';

/**
 * Stripe thin events (event destinations), typed from stripe-node's own
 * `Stripe.V2.Core.EventNotification`: the body names an object
 * (`related_object`) instead of carrying it, so a handler asks for it.
 * https://docs.stripe.com/event-destinations#thin-payload
 */
type Notification = Stripe.V2.Core.EventNotification;
type NotificationOf<T> = Extract<Notification, { type: T }>;
type Methods = 'fetchEvent' | 'fetchRelatedObject' | 'context';

/** Every thin event type stripe-node knows (`v1.invoice.paid`, `v2.core.account.updated`, …): `on: ['stripe:<type>']`. */
export type StripeThinEventType = Notification['type'];

/**
 * A thin event as Stripe delivers it (the JSON `run` gets): `id`, `type`,
 * `created` (an ISO time), `livemode`, `related_object` (`{id, type, url}`)
 * when the type has one, `context` (a connected account) when sent for one.
 */
export type StripeThinEvent<T extends StripeThinEventType = StripeThinEventType> = T extends unknown
  ? Omit<NotificationOf<T>, Methods> & { context?: string }
  : never;

type RelatedOf<N> = N extends { fetchRelatedObject(): Promise<infer O> } ? O : never;
type FullEventOf<N> = N extends { fetchEvent(): Promise<infer E> } ? E : never;

/** The thin types among a handler's `on` names (`stripe:v1.invoice.paid` → `v1.invoice.paid`). */
export type ThinTypeOf<N extends string> = N extends `stripe:${infer T extends StripeThinEventType}` ? T : never;

/**
 * `ctx.stripe` for a thin event: stripe-node's `fetchEvent` and
 * `fetchRelatedObject` through hookrun's one Stripe client
 * (STRIPE_SECRET_KEY), typed by the thin types in `on`. Each call is a request
 * to Stripe; without STRIPE_SECRET_KEY, or for an event that is not a thin
 * one, it throws saying why.
 */
export interface StripeThinEventFetchers<T extends string = StripeThinEventType> {
  /** The full event (`GET /v2/core/events/:id`): `changes`, `reason`, `snapshot_event` and the rest of what the body leaves out. */
  fetchEvent(): Promise<FullEventOf<NotificationOf<T>>>;
  /**
   * The object `related_object.url` names, as the API returns it now (not as
   * it was when the event happened). An event without `related_object`
   * throws `MalformedPayloadError`: it goes dead at once, as no retry can help.
   */
  fetchRelatedObject(): Promise<RelatedOf<NotificationOf<T>>>;
}
