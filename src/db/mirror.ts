import type { Queryable } from './client.js';
import { mirrorBatchOf, type TransitionState } from './mirror-batch.js';

/**
 * Order-safe writes to the mirror tables (DESIGN.md "Processing"). Every row
 * keeps `source_updated_at`, the provider's own time for the state it holds
 * (Clerk: the object's `updated_at`, or the event `timestamp` for a delete;
 * Stripe: the event's `created`). A write older than the stored state changes
 * nothing, so events may arrive in any order and any number of times.
 *
 * Deletes (Clerk users, organizations, memberships) are terminal: Clerk never
 * restores a deleted object or reuses its id. A delete of an unknown id leaves
 * a tombstone so a late `created` cannot resurrect it; `deleted_at` is never
 * cleared. An update older than or as old as the delete is ignored; an update
 * strictly newer than the delete (clock skew between the object's `updated_at`
 * and the event `timestamp`) refreshes the fields but the row stays deleted.
 *
 * Each function returns whether the row was written (false: the event was stale).
 * Inside a worker batch (`db` carries a `MirrorBatch`), customer and
 * subscription writes are deferred to the batch's end and return true.
 */

type IdentityTable = 'users' | 'organizations' | 'memberships';

const iso = (date: Date) => date.toISOString();

async function upsertIdentity(db: Queryable, table: IdentityTable, id: string, fields: Record<string, string | null>, at: Date): Promise<boolean> {
  const columns = Object.keys(fields);
  const placeholders = columns.map((_, i) => `$${i + 3}`);
  const rows = await db.query(
    `INSERT INTO ${table} (id, source_updated_at${columns.map((c) => `, ${c}`).join('')})
     VALUES ($1, $2::timestamptz${placeholders.map((p) => `, ${p}`).join('')})
     ON CONFLICT (id) DO UPDATE SET source_updated_at = excluded.source_updated_at${columns.map((c) => `, ${c} = excluded.${c}`).join('')}
     WHERE ${table}.source_updated_at <= excluded.source_updated_at
       AND (${table}.deleted_at IS NULL OR ${table}.deleted_at < excluded.source_updated_at)
     RETURNING id`,
    [id, iso(at), ...columns.map((c) => fields[c])],
  );
  return rows.length > 0;
}

async function markIdentityDeleted(db: Queryable, table: IdentityTable, id: string, at: Date, known: Record<string, string | null> = {}): Promise<boolean> {
  const columns = Object.keys(known);
  const rows = await db.query(
    `INSERT INTO ${table} (id, deleted_at, source_updated_at${columns.map((c) => `, ${c}`).join('')})
     VALUES ($1, $2::timestamptz, $2::timestamptz${columns.map((_, i) => `, $${i + 3}`).join('')})
     ON CONFLICT (id) DO UPDATE SET deleted_at = excluded.deleted_at,
       source_updated_at = greatest(${table}.source_updated_at, excluded.source_updated_at)${columns.map((c) => `, ${c} = coalesce(${table}.${c}, excluded.${c})`).join('')}
     WHERE ${table}.deleted_at IS NULL
     RETURNING id`,
    [id, iso(at), ...columns.map((c) => known[c])],
  );
  return rows.length > 0;
}

/** A Clerk user as the mirror keeps it. */
export interface UserState {
  id: string;
  email: string | null;
  firstName: string | null;
  lastName: string | null;
  at: Date;
}

/** Create or update a user unless newer (or deleting) state is already stored. */
export function upsertUser(db: Queryable, user: UserState): Promise<boolean> {
  return upsertIdentity(db, 'users', user.id, { email: user.email, first_name: user.firstName, last_name: user.lastName }, user.at);
}

/** Mark a user deleted at `at` (tombstone if unknown); a repeat changes nothing. */
export function markUserDeleted(db: Queryable, id: string, at: Date): Promise<boolean> {
  return markIdentityDeleted(db, 'users', id, at);
}

/** A Clerk organization as the mirror keeps it. */
export interface OrganizationState {
  id: string;
  name: string | null;
  slug: string | null;
  at: Date;
}

/** Create or update an organization unless newer (or deleting) state is already stored. */
export function upsertOrganization(db: Queryable, org: OrganizationState): Promise<boolean> {
  return upsertIdentity(db, 'organizations', org.id, { name: org.name, slug: org.slug }, org.at);
}

/** Mark an organization deleted at `at` (tombstone if unknown). */
export function markOrganizationDeleted(db: Queryable, id: string, at: Date): Promise<boolean> {
  return markIdentityDeleted(db, 'organizations', id, at);
}

/** A Clerk organization membership as the mirror keeps it. */
export interface MembershipState {
  id: string;
  organizationId: string | null;
  userId: string | null;
  role: string | null;
  at: Date;
}

/** Create or update a membership unless newer (or deleting) state is already stored. */
export function upsertMembership(db: Queryable, m: MembershipState): Promise<boolean> {
  return upsertIdentity(db, 'memberships', m.id, { organization_id: m.organizationId, user_id: m.userId, role: m.role }, m.at);
}

/** Mark a membership deleted; fills organization/user on a tombstone when the event names them. */
export function markMembershipDeleted(db: Queryable, m: Omit<MembershipState, 'role'>): Promise<boolean> {
  return markIdentityDeleted(db, 'memberships', m.id, m.at, { organization_id: m.organizationId, user_id: m.userId });
}

/** A Stripe customer as the mirror keeps it; `null` means "this event does not say". */
export interface CustomerState {
  id: string;
  email: string | null;
  userId: string | null;
  at: Date;
}

/**
 * Upsert a customer. The email follows the newest event that names one. The
 * link to our user is a fact that never goes stale: a known `user_id` is kept,
 * and an unknown one is filled in by any event that carries it, even an old one.
 */
export async function upsertCustomer(db: Queryable, c: CustomerState): Promise<boolean> {
  const batch = mirrorBatchOf(db);
  if (batch) return (batch.customer(c), true);
  const rows = await db.query(
    `INSERT INTO customers (id, email, user_id, source_updated_at) VALUES ($1, $2, $3, $4::timestamptz)
     ON CONFLICT (id) DO UPDATE SET
       email = CASE WHEN customers.source_updated_at <= excluded.source_updated_at
                    THEN coalesce(excluded.email, customers.email) ELSE customers.email END,
       user_id = CASE WHEN customers.source_updated_at <= excluded.source_updated_at
                      THEN coalesce(excluded.user_id, customers.user_id) ELSE coalesce(customers.user_id, excluded.user_id) END,
       source_updated_at = greatest(customers.source_updated_at, excluded.source_updated_at)
     RETURNING id`,
    [c.id, c.email, c.userId, iso(c.at)],
  );
  return rows.length > 0;
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
}

/**
 * Upsert a subscription unless newer state is stored. `canceled` is terminal in
 * Stripe, so an event of the same second that still says `active` cannot undo
 * a cancellation (Stripe's `created` has one-second resolution).
 */
export async function upsertSubscription(db: Queryable, s: SubscriptionState): Promise<boolean> {
  const batch = mirrorBatchOf(db);
  if (batch) return (batch.subscription(s), true);
  const rows = await db.query(
    `INSERT INTO subscriptions (id, customer_id, status, price_id, current_period_end, cancel_at_period_end, source_updated_at)
     VALUES ($1, $2, $3, $4, $5::timestamptz, $6, $7::timestamptz)
     ON CONFLICT (id) DO UPDATE SET
       customer_id = coalesce(excluded.customer_id, subscriptions.customer_id),
       status = CASE WHEN subscriptions.status = 'canceled' THEN 'canceled' ELSE excluded.status END,
       price_id = coalesce(excluded.price_id, subscriptions.price_id),
       current_period_end = coalesce(excluded.current_period_end, subscriptions.current_period_end),
       cancel_at_period_end = coalesce(excluded.cancel_at_period_end, subscriptions.cancel_at_period_end),
       source_updated_at = excluded.source_updated_at
     WHERE subscriptions.source_updated_at <= excluded.source_updated_at
     RETURNING id`,
    [s.id, s.customerId, s.status, s.priceId, s.currentPeriodEnd ? iso(s.currentPeriodEnd) : null, s.cancelAtPeriodEnd, iso(s.at)],
  );
  return rows.length > 0;
}

/**
 * Move a known subscription from one of `fromStatuses` to `toStatus` when the
 * invoice event is not older than the stored state (invoice.paid lifts
 * past_due/unpaid/incomplete to active; invoice.payment_failed makes an
 * active/trialing one past_due). An unknown subscription is left to its own
 * `customer.subscription.*` events.
 */
export async function transitionSubscription(db: Queryable, t: TransitionState): Promise<boolean> {
  const batch = mirrorBatchOf(db);
  if (batch) return (batch.transition(t), true);
  const rows = await db.query(
    `UPDATE subscriptions SET status = $3, source_updated_at = $4::timestamptz
     WHERE id = $1 AND status = ANY($2::text[]) AND source_updated_at <= $4::timestamptz
     RETURNING id`,
    [t.id, t.fromStatuses, t.toStatus, iso(t.at)],
  );
  return rows.length > 0;
}

/**
 * Record that Stripe deleted a customer (the API answers 404 or `deleted`).
 * Final, as in Stripe: later upserts never clear `deleted_at`. Written at once,
 * not deferred with a batch: it only sets columns the batched upsert leaves alone.
 */
export async function markCustomerDeleted(db: Queryable, c: { id: string; at: Date }): Promise<void> {
  await db.query(
    `INSERT INTO customers (id, email, user_id, source_updated_at, deleted_at) VALUES ($1, null, null, $2::timestamptz, $2::timestamptz)
     ON CONFLICT (id) DO UPDATE SET deleted_at = coalesce(customers.deleted_at, excluded.deleted_at),
       source_updated_at = greatest(customers.source_updated_at, excluded.source_updated_at)`,
    [c.id, iso(c.at)],
  );
}
