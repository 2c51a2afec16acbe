import type Stripe from 'stripe';
import type { Config } from '../config/config.js';

/** Where the Stripe API client sends requests: Stripe itself, or (`STRIPE_API_BASE`, tests) a local server. */
export type StripeApiSettings = NonNullable<Config['stripe']>;

/** A Stripe event as the events list returns it (the same JSON a webhook delivers). */
export interface StripeEventJson {
  id: string;
  type: string;
  created: number;
  [field: string]: unknown;
}

/**
 * Whose objects a request reads. Empty: the platform's (the key's own
 * account). A Connect event names its connected account (a snapshot event's
 * top-level `account`, sent as `Stripe-Account`; a thin event's `context`,
 * sent as `Stripe-Context`, as stripe-node's own thin-event fetches do): the
 * platform's key sees that account's objects only with it, and without it
 * Stripe answers 404 `resource_missing`.
 * https://docs.stripe.com/connect/authentication#stripe-account-header
 */
export type StripeAccountScope = Pick<Stripe.RequestOptions, 'stripeAccount' | 'stripeContext'>;

/** The scope in words for messages: ` in account acct_…`, or nothing for the platform's. */
export const describeScope = (scope: StripeAccountScope = {}): string => {
  const account = scope.stripeAccount ?? scope.stripeContext;
  return account ? ` in account ${String(account)}` : '';
};

/** Which of Stripe's two worlds a key or an event belongs to: `sk_test_`/`rk_test_` and `livemode: false` are `test`. */
export type StripeMode = 'test' | 'live';

/** The mode of a secret or restricted key (config checked its shape). */
export const keyModeOf = (secretKey: string): StripeMode => (/^(sk|rk)_live_/.test(secretKey) ? 'live' : 'test');

/**
 * Stripe answered 404 `resource_missing`: no such object *for this key*. A
 * test key never sees live objects, so only the handler, which knows the
 * event's `livemode`, can tell a deleted object from a key of the wrong mode.
 */
export class StripeObjectMissing extends Error {
  constructor(readonly what: string) {
    super(`Stripe has no ${what} for this key (404 resource_missing)`);
    this.name = 'StripeObjectMissing';
  }
}

/**
 * The few Stripe API calls hookrun makes. A retrieve answers `null` for a
 * customer marked `deleted`, throws `StripeObjectMissing` on a 404
 * `resource_missing`, and throws a plain error for anything else (another
 * 404 is a wrong STRIPE_API_BASE, not a missing object): the handler retries.
 */
export interface StripeApi {
  /** The mode of STRIPE_SECRET_KEY: the only mode whose objects the API can return. */
  readonly keyMode: StripeMode;
  retrieveSubscription(id: string, scope?: StripeAccountScope): Promise<Record<string, unknown> | null>;
  retrieveCustomer(id: string, scope?: StripeAccountScope): Promise<Record<string, unknown> | null>;
  /** Events created at or after `since`, newest first, page by page (`starting_after`) until `has_more` is false. */
  listEvents(options: { since: Date; types: readonly string[] }): AsyncIterable<StripeEventJson>;
  /**
   * A stored (verified at receipt) thin event as stripe-node's own event
   * notification (`parseEventNotificationWithoutVerification`): its
   * `fetchEvent` and `fetchRelatedObject` go through this client. Throws for
   * a snapshot event (`object: "event"`).
   */
  thinEvent(payload: unknown): Promise<Stripe.V2.Core.EventNotification>;
  /** A thin event's related object as a retrieve answers it (`null` when deleted, `StripeObjectMissing` on a 404); `undefined` without `related_object`. */
  retrieveRelatedObject(payload: unknown): Promise<Record<string, unknown> | null | undefined>;
}

/** Each request's limit: shorter than the inbox lease, so a stuck fetch fails and is retried. */
const REQUEST_TIMEOUT_MS = 10_000;
/** Stripe's events list accepts at most 20 `types[]` per request. */
const MAX_TYPES_PER_LIST = 20;

async function orNull<T extends object>(request: Promise<T>, what: string, apiBase: URL | undefined): Promise<Record<string, unknown> | null> {
  try {
    const object = (await request) as Record<string, unknown>;
    return object.deleted === true ? null : object;
  } catch (error) {
    const e = error as { statusCode?: number; code?: string; message?: string } | undefined;
    if (e?.statusCode === 404 && e.code === 'resource_missing') throw new StripeObjectMissing(what);
    if (e?.statusCode === 404) {
      throw new Error(
        `${apiBase ? `STRIPE_API_BASE (${apiBase.origin})` : 'The Stripe API'} answered 404 without resource_missing for ${what}: not Stripe's "no such object". Check STRIPE_API_BASE; the event is retried.`,
        { cause: error },
      );
    }
    throw error;
  }
}

/**
 * Build the client with stripe-node. The package is imported here, on first
 * use, not at start-up: `import 'stripe'` costs ~300-450 ms, which a hookrun
 * without STRIPE_SECRET_KEY never pays.
 */
export function createStripeApi(settings: StripeApiSettings): StripeApi {
  let client: Promise<Stripe> | undefined;
  const stripe = () =>
    (client ??= import('stripe').then(({ default: StripeClient }) => {
      const base = settings.apiBase;
      return new StripeClient(settings.secretKey, {
        timeout: REQUEST_TIMEOUT_MS,
        maxNetworkRetries: 1,
        telemetry: false,
        appInfo: { name: 'hookrun' },
        ...(base
          ? { protocol: base.protocol.replace(':', '') as 'http' | 'https', host: base.hostname, port: base.port || (base.protocol === 'https:' ? 443 : 80) }
          : {}),
      });
    }));
  const thinEvent = async (payload: unknown) => (await stripe()).parseEventNotificationWithoutVerification(JSON.stringify(payload));
  return {
    keyMode: keyModeOf(settings.secretKey),
    thinEvent,
    async retrieveRelatedObject(payload) {
      const notification = (await thinEvent(payload)) as Stripe.V2.Core.Events.UnknownEventNotification;
      const related = notification.related_object;
      if (!related) return undefined;
      return orNull(notification.fetchRelatedObject() as Promise<object>, `${related.type} ${related.id}`, settings.apiBase);
    },
    retrieveSubscription: async (id, scope = {}) =>
      orNull((await stripe()).subscriptions.retrieve(id, {}, scope), `subscription ${id}${describeScope(scope)}`, settings.apiBase),
    retrieveCustomer: async (id, scope = {}) =>
      orNull((await stripe()).customers.retrieve(id, {}, scope), `customer ${id}${describeScope(scope)}`, settings.apiBase),
    async *listEvents({ since, types }) {
      const client = await stripe();
      const gte = Math.floor(since.getTime() / 1000);
      // One listing per 20 types; events of different listings never repeat (an event has one type).
      for (let i = 0; i < Math.max(types.length, 1); i += MAX_TYPES_PER_LIST) {
        const chunk = types.slice(i, i + MAX_TYPES_PER_LIST);
        const params: Stripe.EventListParams = { created: { gte }, limit: 100, ...(chunk.length > 0 ? { types: chunk } : {}) };
        for await (const event of client.events.list(params)) yield event as unknown as StripeEventJson;
      }
    },
  };
}
