import type { EventWriter } from '../db/event-writer.js';
import { parseSince } from '../since.js';
import { STRIPE_SAMPLE_TYPES } from '../webhooks/sample-events/types.js';
import type { StripeApi, StripeEventJson } from './stripe-client.js';
import type { ReconcileSummary } from '../reconcile/summary.js';

export type { ReconcileSummary };

/** Stripe keeps events for 30 days: `GET /v1/events` cannot return anything older. */
export const STRIPE_EVENT_RETENTION_DAYS = 30;
/** The Stripe event types hookrun's payments handlers act on: what a reconcile lists (a test keeps it equal to the handlers'). */
export const RECONCILED_PAYMENT_TYPES: readonly string[] = STRIPE_SAMPLE_TYPES;

/** Events written side by side: one group-committed INSERT per page of the listing. */
const WRITE_CHUNK = 100;

/** What a reconcile needs: the API, the receivers' insert-or-ignore, the window and the types. */
export interface ReconcileInput {
  api: StripeApi;
  writer: Pick<EventWriter, 'write'>;
  since: Date;
  /** Default: RECONCILED_PAYMENT_TYPES. */
  types?: readonly string[];
  /** Called after each written chunk with the running counts (a progress bar). */
  onProgress?: (counts: { found: number; added: number }) => void;
  signal?: AbortSignal;
}

/**
 * Recover what Stripe sent while hookrun was down past its retry window
 * (3 days): list the account's events since `since` and feed each into the
 * inbox through the same `INSERT … ON CONFLICT (source, key) DO NOTHING` as
 * the receiver, keyed by the event id. An event already stored is left alone,
 * so running it twice adds nothing. The listing is the API's, over TLS with
 * the secret key: as trusted as a signed delivery.
 */
export async function reconcilePayments(input: ReconcileInput): Promise<ReconcileSummary> {
  const summary: ReconcileSummary = { since: input.since.toISOString(), found: 0, added: 0, alreadyStored: 0, addedIds: [] };
  const added: Array<{ id: string; created: number }> = [];
  let chunk: StripeEventJson[] = [];
  const flush = async () => {
    const stored = await Promise.all(
      chunk.map((event) => input.writer.write({ source: 'payments', key: event.id, type: event.type, payloadJson: JSON.stringify(event) })),
    );
    stored.forEach((result, i) => {
      if (result.duplicate) summary.alreadyStored++;
      else added.push({ id: chunk[i]!.id, created: chunk[i]!.created });
    });
    summary.found += chunk.length;
    summary.added = added.length;
    chunk = [];
    input.onProgress?.({ found: summary.found, added: summary.added });
  };
  for await (const event of input.api.listEvents({ since: input.since, types: input.types ?? RECONCILED_PAYMENT_TYPES })) {
    input.signal?.throwIfAborted();
    chunk.push(event);
    if (chunk.length >= WRITE_CHUNK) await flush();
  }
  if (chunk.length > 0) await flush();
  summary.addedIds = added
    .sort((a, b) => a.created - b.created || a.id.localeCompare(b.id))
    .slice(0, 100)
    .map((e) => e.id);
  return summary;
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
