import type { Queryable } from './database.js';

/**
 * Order-safe writes to the identity mirror tables: users, organizations,
 * memberships (DESIGN.md "Processing"); the payments tables live in
 * payments-mirror.ts. Every row
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
  /** Whose user (AUTH_PROVIDER); default `clerk`. */
  provider?: string;
}

/** Create or update a user unless newer (or deleting) state is already stored. */
export function upsertUser(db: Queryable, user: UserState): Promise<boolean> {
  return upsertIdentity(db, 'users', user.id, { email: user.email, first_name: user.firstName, last_name: user.lastName, provider: user.provider ?? 'clerk' }, user.at);
}

/** Mark a user deleted at `at` (tombstone if unknown); a repeat changes nothing. */
export function markUserDeleted(db: Queryable, id: string, at: Date, provider?: string): Promise<boolean> {
  return markIdentityDeleted(db, 'users', id, at, provider ? { provider } : {});
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
