import type { EventWriter } from '../db/event-writer.js';
import { parseSince } from '../time/since.js';
import { STRIPE_SAMPLE_TYPES } from '../webhooks/sample-events/types.js';
import type { StripeApi } from './stripe-client.js';
import { storeListedPages, type ListedEvent } from '../reconcile/store-events.js';
import type { ReconcileSummary } from '../reconcile/summary.js';

export type { ReconcileSummary };

/** Stripe keeps events for 30 days: `GET /v1/events` cannot return anything older. */
export const STRIPE_EVENT_RETENTION_DAYS = 30;
/** The Stripe event types hookrun's payments handlers act on: what a reconcile lists (a test keeps it equal to the handlers'). */
export const RECONCILED_PAYMENT_TYPES: readonly string[] = STRIPE_SAMPLE_TYPES;

/** Events handed to the store at once: one page of the listing (Stripe's `limit=100`). */
const PAGE_SIZE = 100;

/** What a reconcile needs: the API, the receivers' insert-or-ignore, the window and the types. */
export interface ReconcileInput {
  api: StripeApi;
  writer: Pick<EventWriter, 'write'>;
  since: Date;
  /** Default: RECONCILED_PAYMENT_TYPES. */
  types?: readonly string[];
  /** Called after each written page with the running counts (a progress bar). */
  onProgress?: (counts: { found: number; added: number }) => void;
  signal?: AbortSignal;
}

/** Stripe's listing (auto-paged by stripe-node) cut back into pages of stored events, so only one page is held at a time. */
async function* stripePages(input: ReconcileInput): AsyncIterable<ListedEvent[]> {
  let page: ListedEvent[] = [];
  for await (const event of input.api.listEvents({ since: input.since, types: input.types ?? RECONCILED_PAYMENT_TYPES })) {
    input.signal?.throwIfAborted();
    page.push({ key: event.id, type: event.type, payloadJson: JSON.stringify(event), atMs: event.created * 1000 });
    if (page.length >= PAGE_SIZE) {
      yield page;
      page = [];
    }
  }
  if (page.length > 0) yield page;
}

/**
 * Recover what Stripe sent while hookrun was down past its retry window
 * (3 days): list the account's events since `since` and feed each page into
 * the inbox as it arrives, through the same `INSERT … ON CONFLICT (source,
 * key) DO NOTHING` as the receiver, keyed by the event id. An event already
 * stored is left alone, so running it twice adds nothing. The listing is the
 * API's, over TLS with the secret key: as trusted as a signed delivery.
 */
export async function reconcilePayments(input: ReconcileInput): Promise<ReconcileSummary> {
  return storeListedPages({
    writer: input.writer,
    source: 'payments',
    since: input.since,
    pages: stripePages(input),
    onProgress: input.onProgress,
    signal: input.signal,
  });
}

/**
 * `--since` for a reconcile: a duration or an ISO date (see since.ts), no
 * older than Stripe keeps events.
 */
export function parseReconcileSince(text: string, nowMs: number): Date {
  const since = parseSince(text, nowMs);
  if (nowMs - since.getTime() > STRIPE_EVENT_RETENTION_DAYS * 86_400_000 + 60_000) {
    throw new Error(
      `--since "${text}" is more than ${STRIPE_EVENT_RETENTION_DAYS} days ago: Stripe keeps events for ${STRIPE_EVENT_RETENTION_DAYS} days, so the API cannot list older ones. Use --since 30d at most.`,
    );
  }
  return since;
}
