import type { Queryable } from './client.js';
import type { CustomerState, SubscriptionState } from './mirror.js';

/**
 * Deferred mirror writes of one worker batch, applied at the end of its
 * transaction as a few multi-row statements instead of one statement per
 * event (each statement is a round trip, and round trips were most of the
 * cost of processing). The result equals applying the writes one by one in
 * the order they were made: writes to different rows commute, so the k-th
 * write to each row goes into round k, and a round holds at most one write
 * per row (ON CONFLICT may touch a row once per statement).
 */

const iso = (date: Date) => date.toISOString();

type SubscriptionOp = { kind: 'upsert'; s: SubscriptionState } | { kind: 'transition'; t: TransitionState };

/** The arguments of `transitionSubscription`. */
export interface TransitionState {
  id: string;
  fromStatuses: string[];
  toStatus: string;
  at: Date;
}

const UPSERT_CUSTOMERS_SQL = `
  INSERT INTO customers (id, email, user_id, source_updated_at)
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[])
  ON CONFLICT (id) DO UPDATE SET
    email = CASE WHEN customers.source_updated_at <= excluded.source_updated_at
                 THEN coalesce(excluded.email, customers.email) ELSE customers.email END,
    user_id = CASE WHEN customers.source_updated_at <= excluded.source_updated_at
                   THEN coalesce(excluded.user_id, customers.user_id) ELSE coalesce(customers.user_id, excluded.user_id) END,
    source_updated_at = greatest(customers.source_updated_at, excluded.source_updated_at)`;

const UPSERT_SUBSCRIPTIONS_SQL = `
  INSERT INTO subscriptions (id, customer_id, status, price_id, current_period_end, cancel_at_period_end, source_updated_at)
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::boolean[], $7::timestamptz[])
  ON CONFLICT (id) DO UPDATE SET
    customer_id = coalesce(excluded.customer_id, subscriptions.customer_id),
    status = CASE WHEN subscriptions.status = 'canceled' THEN 'canceled' ELSE excluded.status END,
    price_id = coalesce(excluded.price_id, subscriptions.price_id),
    current_period_end = coalesce(excluded.current_period_end, subscriptions.current_period_end),
    cancel_at_period_end = coalesce(excluded.cancel_at_period_end, subscriptions.cancel_at_period_end),
    source_updated_at = excluded.source_updated_at
  WHERE subscriptions.source_updated_at <= excluded.source_updated_at`;

// from_statuses travels as one text per row (arrays of arrays must be rectangular); statuses never contain a comma.
const TRANSITION_SUBSCRIPTIONS_SQL = `
  UPDATE subscriptions s SET status = u.to_status, source_updated_at = u.at
  FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[]) AS u(id, from_statuses, to_status, at)
  WHERE s.id = u.id AND s.status = ANY(string_to_array(u.from_statuses, ',')) AND s.source_updated_at <= u.at`;

/** Split writes into rounds: the k-th write to a row goes into round k. */
function rounds<T>(items: T[], idOf: (item: T) => string): T[][] {
  const seen = new Map<string, number>();
  const out: T[][] = [];
  for (const item of items) {
    const id = idOf(item);
    const round = seen.get(id) ?? 0;
    seen.set(id, round + 1);
    (out[round] ??= []).push(item);
  }
  return out;
}

/** Collects the customer/subscription writes of a batch; `flush` applies them in its transaction. */
export class MirrorBatch {
  private customers: CustomerState[] = [];
  private subscriptions: SubscriptionOp[] = [];

  /** Queue `upsertCustomer`. */
  customer(c: CustomerState): void {
    this.customers.push(c);
  }

  /** Queue `upsertSubscription`. */
  subscription(s: SubscriptionState): void {
    this.subscriptions.push({ kind: 'upsert', s });
  }

  /** Queue `transitionSubscription`. */
  transition(t: TransitionState): void {
    this.subscriptions.push({ kind: 'transition', t });
  }

  /** Apply everything queued, round by round, on `db` (the batch's transaction). */
  async flush(db: Queryable): Promise<void> {
    for (const round of rounds(this.customers, (c) => c.id)) {
      await db.query(UPSERT_CUSTOMERS_SQL, [round.map((c) => c.id), round.map((c) => c.email), round.map((c) => c.userId), round.map((c) => iso(c.at))]);
    }
    for (const round of rounds(this.subscriptions, (op) => (op.kind === 'upsert' ? op.s.id : op.t.id))) {
      const upserts = round.flatMap((op) => (op.kind === 'upsert' ? [op.s] : []));
      const transitions = round.flatMap((op) => (op.kind === 'transition' ? [op.t] : []));
      if (upserts.length > 0) {
        await db.query(UPSERT_SUBSCRIPTIONS_SQL, [
          upserts.map((s) => s.id),
          upserts.map((s) => s.customerId),
          upserts.map((s) => s.status),
          upserts.map((s) => s.priceId),
          upserts.map((s) => (s.currentPeriodEnd ? iso(s.currentPeriodEnd) : null)),
          upserts.map((s) => s.cancelAtPeriodEnd),
          upserts.map((s) => iso(s.at)),
        ]);
      }
      if (transitions.length > 0) {
        await db.query(TRANSITION_SUBSCRIPTIONS_SQL, [
          transitions.map((t) => t.id),
          transitions.map((t) => t.fromStatuses.join(',')),
          transitions.map((t) => t.toStatus),
          transitions.map((t) => iso(t.at)),
        ]);
      }
    }
    this.customers = [];
    this.subscriptions = [];
  }
}

/** A Queryable that also defers mirror writes (the worker's batch transaction hands this to handlers). */
export interface DeferringQueryable extends Queryable {
  readonly mirrorBatch: MirrorBatch;
}

/** The batch to defer into, when `db` is a batch transaction. */
export function mirrorBatchOf(db: Queryable): MirrorBatch | undefined {
  return (db as Partial<DeferringQueryable>).mirrorBatch;
}
