import type { Queryable } from './database.js';
import { rounds, writeNow, type DeferredWrites, type FlushResult, type WriteFamily } from './write-batch.js';

/**
 * The one home of the payments mirror's writes (customers, subscriptions).
 * Order-safe: every row keeps `source_updated_at` (Stripe: the event's
 * `created`, or with STRIPE_SECRET_KEY the time the API was asked), and an
 * older write changes nothing. Writes are queued and applied as multi-row
 * statements, the k-th write to a row in round k (ON CONFLICT may touch a row
 * once per statement), which gives the same result as one by one; a single
 * write is a batch of one. The ordering SQL is written here once.
 */

/** A Stripe customer as the mirror keeps it; `null` means "this event does not say". */
export interface CustomerState {
  id: string;
  email: string | null;
  userId: string | null;
  at: Date;
  /** Whose customer (PAYMENTS_PROVIDER); default `stripe`. Set when the row is first written. */
  provider?: string;
  /** What the Stripe API returned at `at`, not what an event said: newer than the row, it clears `deleted_at` (the customer is live). */
  readFromApi?: boolean;
}

/** A Stripe subscription as the mirror keeps it. */
export interface SubscriptionState {
  id: string;
  customerId: string | null;
  status: string;
  priceId: string | null;
  currentPeriodEnd: Date | null;
  cancelAtPeriodEnd: boolean | null;
  at: Date;
  /** Whose subscription (PAYMENTS_PROVIDER); default `stripe`. Set when the row is first written. */
  provider?: string;
  /** What the Stripe API returned at `at`, not what an event said: newer than the row, it replaces `canceled` (the API shows it live). */
  readFromApi?: boolean;
}

/** Move a known subscription from one of `fromStatuses` to `toStatus` (invoice outcomes). */
export interface TransitionState {
  id: string;
  fromStatuses: string[];
  toStatus: string;
  at: Date;
}

const iso = (date: Date) => date.toISOString();

/**
 * The email follows the newest write that names one. The link to our user is
 * a fact that never goes stale: a known `user_id` is kept, and an unknown one
 * is filled in by any write that carries it, even an old one. A deletion is
 * undone only by a read of the API strictly newer than every write of the
 * row: the customer is live again, so the 404 that marked it was not Stripe's
 * deletion (a connected account's customer read without its account).
 */
const upsertCustomersSql = (readFromApi: boolean) => `
  INSERT INTO hookrun.customers (id, email, user_id, source_updated_at, provider)
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::text[])
  ON CONFLICT (id) DO UPDATE SET
    email = CASE WHEN customers.source_updated_at <= excluded.source_updated_at
                 THEN coalesce(excluded.email, customers.email) ELSE customers.email END,
    user_id = CASE WHEN customers.source_updated_at <= excluded.source_updated_at
                   THEN coalesce(excluded.user_id, customers.user_id) ELSE coalesce(customers.user_id, excluded.user_id) END,
    ${readFromApi ? 'deleted_at = CASE WHEN customers.source_updated_at < excluded.source_updated_at THEN NULL ELSE customers.deleted_at END,' : ''}
    source_updated_at = greatest(customers.source_updated_at, excluded.source_updated_at)
  RETURNING id`;
const UPSERT_CUSTOMERS_SQL = { fromEvents: upsertCustomersSql(false), fromApi: upsertCustomersSql(true) };

/**
 * `canceled` is terminal in Stripe: a same-second write that still says
 * `active` cannot undo it, nor can any write from an event. Only a read of
 * the API strictly newer than the row replaces it: the API shows the
 * subscription live, so the 404 that canceled it was not Stripe's (a
 * connected account's subscription read without its account).
 */
const upsertSubscriptionsSql = (readFromApi: boolean) => `
  INSERT INTO hookrun.subscriptions (id, customer_id, status, price_id, current_period_end, cancel_at_period_end, source_updated_at, provider)
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::boolean[], $7::timestamptz[], $8::text[])
  ON CONFLICT (id) DO UPDATE SET
    customer_id = coalesce(excluded.customer_id, subscriptions.customer_id),
    status = CASE WHEN subscriptions.status = 'canceled'${readFromApi ? ' AND subscriptions.source_updated_at = excluded.source_updated_at' : ''}
                  THEN 'canceled' ELSE excluded.status END,
    price_id = coalesce(excluded.price_id, subscriptions.price_id),
    current_period_end = coalesce(excluded.current_period_end, subscriptions.current_period_end),
    cancel_at_period_end = coalesce(excluded.cancel_at_period_end, subscriptions.cancel_at_period_end),
    source_updated_at = excluded.source_updated_at
  WHERE subscriptions.source_updated_at <= excluded.source_updated_at
  RETURNING id`;
const UPSERT_SUBSCRIPTIONS_SQL = { fromEvents: upsertSubscriptionsSql(false), fromApi: upsertSubscriptionsSql(true) };

// from_statuses travels as one text per row (arrays of arrays must be rectangular); statuses never contain a comma.
const TRANSITION_SUBSCRIPTIONS_SQL = `
  UPDATE hookrun.subscriptions s SET status = u.to_status, source_updated_at = u.at
  FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[]) AS u(id, from_statuses, to_status, at)
  WHERE s.id = u.id AND s.status = ANY(string_to_array(u.from_statuses, ',')) AND s.source_updated_at <= u.at
  RETURNING s.id`;

/**
 * A round's upserts split by where their state came from, each part with its
 * statement (a row appears once per round, so the two statements of a round
 * never touch the same row); an empty part is left out.
 */
function bySource<T extends { readFromApi?: boolean }>(round: T[], sql: { fromEvents: string; fromApi: string }): Array<[string, T[]]> {
  const parts: Array<[string, T[]]> = [
    [sql.fromEvents, round.filter((w) => w.readFromApi !== true)],
    [sql.fromApi, round.filter((w) => w.readFromApi === true)],
  ];
  return parts.filter(([, part]) => part.length > 0);
}

type SubscriptionOp = { kind: 'upsert'; s: SubscriptionState } | { kind: 'transition'; t: TransitionState };

/** The queued customer and subscription writes of a batch; `flush` applies them in the caller's transaction. */
export class PaymentsMirrorWrites implements DeferredWrites {
  private customers: CustomerState[] = [];
  private subscriptions: SubscriptionOp[] = [];

  /** Queue a customer upsert (see UPSERT_CUSTOMERS_SQL for what wins). */
  customer(c: CustomerState): void {
    this.customers.push(c);
  }

  /** Queue a subscription upsert unless newer state is stored. */
  subscription(s: SubscriptionState): void {
    this.subscriptions.push({ kind: 'upsert', s });
  }

  /** Queue a status transition of a known subscription. */
  transition(t: TransitionState): void {
    this.subscriptions.push({ kind: 'transition', t });
  }

  /** Apply everything queued, round by round, on `db`; the queue is empty after. */
  async flush(db: Queryable): Promise<FlushResult> {
    const customers = this.customers;
    const subscriptions = this.subscriptions;
    this.customers = [];
    this.subscriptions = [];
    let written = 0;
    for (const [sql, round] of rounds(customers, (c) => c.id).flatMap((r) => bySource(r, UPSERT_CUSTOMERS_SQL))) {
      written += (
        await db.query(sql, [
          round.map((c) => c.id),
          round.map((c) => c.email),
          round.map((c) => c.userId),
          round.map((c) => iso(c.at)),
          round.map((c) => c.provider ?? 'stripe'),
        ])
      ).length;
    }
    for (const round of rounds(subscriptions, (op) => (op.kind === 'upsert' ? op.s.id : op.t.id))) {
      const upserts = round.flatMap((op) => (op.kind === 'upsert' ? [op.s] : []));
      const transitions = round.flatMap((op) => (op.kind === 'transition' ? [op.t] : []));
      for (const [sql, part] of bySource(upserts, UPSERT_SUBSCRIPTIONS_SQL)) {
        const params = [
          part.map((s) => s.id),
          part.map((s) => s.customerId),
          part.map((s) => s.status),
          part.map((s) => s.priceId),
          part.map((s) => (s.currentPeriodEnd ? iso(s.currentPeriodEnd) : null)),
          part.map((s) => s.cancelAtPeriodEnd),
          part.map((s) => iso(s.at)),
          part.map((s) => s.provider ?? 'stripe'),
        ];
        written += (await db.query(sql, params)).length;
      }
      if (transitions.length > 0) {
        const params = [
          transitions.map((t) => t.id),
          transitions.map((t) => t.fromStatuses.join(',')),
          transitions.map((t) => t.toStatus),
          transitions.map((t) => iso(t.at)),
        ];
        written += (await db.query(TRANSITION_SUBSCRIPTIONS_SQL, params)).length;
      }
    }
    return { written };
  }
}

/** The payments mirror as a batch family: `ctx.batch.of(PAYMENTS_MIRROR).customer(…)`. */
export const PAYMENTS_MIRROR: WriteFamily<PaymentsMirrorWrites> = { name: 'payments mirror', create: () => new PaymentsMirrorWrites() };

/** Upsert one customer now (a batch of one); true when the row changed. */
export const upsertCustomer = (db: Queryable, c: CustomerState) => writeNow(PAYMENTS_MIRROR, db, (w) => w.customer(c));
/** Upsert one subscription now unless newer state is stored; false when stale. */
export const upsertSubscription = (db: Queryable, s: SubscriptionState) => writeNow(PAYMENTS_MIRROR, db, (w) => w.subscription(s));
/** Transition one known subscription now; false when unknown, in another status, or stale. */
export const transitionSubscription = (db: Queryable, t: TransitionState) => writeNow(PAYMENTS_MIRROR, db, (w) => w.transition(t));

/**
 * Record that Stripe deleted a customer (the API answers 404 or `deleted`).
 * Undone only by a newer read of the API that finds the customer live (see
 * upsertCustomersSql); a late write from an event never clears it. Applied at
 * once: a queued upsert that clears `deleted_at` does so only when it is
 * newer than this, whichever is flushed first.
 */
export async function markCustomerDeleted(db: Queryable, c: { id: string; at: Date }): Promise<void> {
  await db.query(
    `INSERT INTO hookrun.customers (id, email, user_id, source_updated_at, deleted_at) VALUES ($1, null, null, $2::timestamptz, $2::timestamptz)
     ON CONFLICT (id) DO UPDATE SET deleted_at = coalesce(customers.deleted_at, excluded.deleted_at),
       source_updated_at = greatest(customers.source_updated_at, excluded.source_updated_at)`,
    [c.id, iso(c.at)],
  );
}
