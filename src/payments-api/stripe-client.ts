import type Stripe from 'stripe';
import type { Config } from '../config.js';

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
 * The few Stripe API calls hookrun makes. A retrieve answers `null` when the
 * object is gone (404 `resource_missing`, or a customer marked `deleted`), so
 * callers apply a delete; any other failure throws and the handler is retried.
 */
export interface StripeApi {
  retrieveSubscription(id: string): Promise<Record<string, unknown> | null>;
  retrieveCustomer(id: string): Promise<Record<string, unknown> | null>;
  /** Events created at or after `since`, newest first, page by page (`starting_after`) until `has_more` is false. */
  listEvents(options: { since: Date; types: readonly string[] }): AsyncIterable<StripeEventJson>;
}

/** Each request's limit: shorter than the inbox lease, so a stuck fetch fails and is retried. */
const REQUEST_TIMEOUT_MS = 10_000;
/** Stripe's events list accepts at most 20 `types[]` per request. */
const MAX_TYPES_PER_LIST = 20;

function isMissing(error: unknown): boolean {
  const e = error as { statusCode?: number; code?: string } | undefined;
  return e?.statusCode === 404 || e?.code === 'resource_missing';
}

async function orNull<T extends object>(request: Promise<T>): Promise<Record<string, unknown> | null> {
  try {
    const object = (await request) as Record<string, unknown>;
    return object.deleted === true ? null : object;
  } catch (error) {
    if (isMissing(error)) return null;
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
        ...(base ? { protocol: base.protocol.replace(':', '') as 'http' | 'https', host: base.hostname, port: base.port || (base.protocol === 'https:' ? 443 : 80) } : {}),
      });
    }));
  return {
    retrieveSubscription: async (id) => orNull((await stripe()).subscriptions.retrieve(id)),
    retrieveCustomer: async (id) => orNull((await stripe()).customers.retrieve(id)),
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
