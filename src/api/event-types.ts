import type { WebhookEvent as ClerkWebhookEvent } from '@clerk/backend';
import type { EventPayloadMap } from '@octokit/webhooks-types';
import type Stripe from 'stripe';
import type { StripeThinEvent, StripeThinEventType } from './stripe-thin-events.js';

/**
 * A database change as Supabase Database Webhooks send it (and as hookrun's
 * own WAL capture stores it): the row typed by `R` when the handler says so,
 * `run(event: DatabaseChange<Order>, ctx)`, with `Order` a `type` (an
 * `interface` needs `extends Record<string, unknown>` to fit).
 */
export interface DatabaseChange<R = Record<string, unknown>> {
  type: 'INSERT' | 'UPDATE' | 'DELETE';
  table: string;
  schema: string;
  record: R | null;
  old_record: R | null;
}

/**
 * Your own senders from platform.json `webhooks`, by route: declare them to
 * type their events (`declare module 'hookrun' { interface CustomSenders { orders: true } }`
 * allows `orders:<type>` in `on`).
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- augmented by projects
export interface CustomSenders {}

type DatabaseOperation = DatabaseChange['type'];
type GithubEventName = keyof EventPayloadMap;
type GithubName = {
  [E in GithubEventName]: `github:${E}` | (EventPayloadMap[E] extends { action: infer A extends string } ? `github:${E}.${A}` : never);
}[GithubEventName];
/** Senders whose types hookrun checks only at start-up (their payloads are plain JSON objects to the compiler). */
type UntypedProvider =
  'paddle' | 'lemonsqueezy' | 'polar' | 'workos' | 'supabase-auth' | 'shopify' | 'resend' | 'twilio' | Extract<keyof CustomSenders, string>;

/**
 * What `defineHandler({ on })` accepts: `<provider>:<type>`. Stripe (snapshot
 * and thin events), Clerk and GitHub types come from their own packages, so a typo is a compile
 * error; `database:INSERT` (or `database:INSERT:orders`, `…:public.orders`)
 * selects database changes, optionally of one table.
 */
export type EventName =
  | `stripe:${Stripe.Event.Type}`
  | `stripe:${StripeThinEventType}`
  | `clerk:${ClerkWebhookEvent['type']}`
  | GithubName
  | `database:${DatabaseOperation}`
  | `database:${DatabaseOperation}:${string}`
  | `${UntypedProvider}:${string}`;

/** The members of a `type`-tagged union that may carry type `T` (a member may list several types), narrowed to it. */
type WithType<E, T> = E extends { type: infer U } ? (T extends U ? E & { type: T } : never) : never;

/** The payload a handler of event name `N` receives: the provider's own published type for it. */
export type EventOf<N extends string> = N extends `stripe:${infer T}`
  ? T extends StripeThinEventType
    ? StripeThinEvent<T>
    : Extract<Stripe.Event, { type: T }>
  : N extends `clerk:${infer T}`
    ? WithType<ClerkWebhookEvent, T>
    : N extends `github:${infer E}.${infer A}`
      ? E extends GithubEventName
        ? Extract<EventPayloadMap[E], { action: A }>
        : never
      : N extends `github:${infer E}`
        ? E extends GithubEventName
          ? EventPayloadMap[E]
          : never
        : N extends `database:${string}`
          ? DatabaseChange
          : Record<string, unknown>;
