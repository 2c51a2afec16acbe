import type { Queryable } from './database.js';
import { rounds, writeNow, type DeferredWrites, type FlushResult, type WriteFamily } from './write-batch.js';

/**
 * The one home of the identity mirror's writes: users, organizations,
 * memberships; the payments tables live in
 * payments-mirror.ts. Every row keeps `source_updated_at`, the provider's own
 * time for the state it holds (Clerk: the object's `updated_at`, or the event
 * `timestamp` for a delete; WorkOS: the user's `updated_at`). A write older
 * than the stored state changes nothing, so events may arrive in any order
 * and any number of times.
 *
 * Deletes (Clerk users, organizations, memberships) are terminal: Clerk never
 * restores a deleted object or reuses its id. A delete of an unknown id leaves
 * a tombstone so a late `created` cannot resurrect it; `deleted_at` is never
 * cleared. An update older than or as old as the delete is ignored; an update
 * strictly newer than the delete (clock skew between the object's `updated_at`
 * and the event `timestamp`) refreshes the fields but the row stays deleted.
 *
 * Writes are queued (`ctx.batch.of(IDENTITY_MIRROR)`) and applied as
 * multi-row statements, per table an upsert and a delete statement per round:
 * a table's upserts and deletes share one queue, the k-th write to a row goes
 * into round k, so each row gets its writes in queue order and the result is
 * that of the writes one by one. A single write is a batch of one and says
 * whether the row was written (false: the event was stale).
 */

type IdentityTable = 'users' | 'organizations' | 'memberships';

/** A table's text columns an upsert sets, and those a delete fills on a tombstone (and on a known row only where empty). */
const COLUMNS: Record<IdentityTable, { fields: string[]; known: string[] }> = {
  users: { fields: ['email', 'first_name', 'last_name', 'provider'], known: ['provider'] },
  organizations: { fields: ['name', 'slug'], known: [] },
  memberships: { fields: ['organization_id', 'user_id', 'role'], known: ['organization_id', 'user_id'] },
};

const list = (columns: string[], each: (c: string, i: number) => string) => columns.map((c, i) => `, ${each(c, i)}`).join('');
const textArrays = (columns: string[]) => list(columns, (_, i) => `$${i + 3}::text[]`);

/** Newer than the stored state and than its delete, or nothing. */
function upsertSql(table: IdentityTable): string {
  const { fields } = COLUMNS[table];
  return `
  INSERT INTO hookrun.${table} (id, source_updated_at${list(fields, (c) => c)})
  SELECT * FROM unnest($1::text[], $2::timestamptz[]${textArrays(fields)})
  ON CONFLICT (id) DO UPDATE SET source_updated_at = excluded.source_updated_at${list(fields, (c) => `${c} = excluded.${c}`)}
  WHERE ${table}.source_updated_at <= excluded.source_updated_at
    AND (${table}.deleted_at IS NULL OR ${table}.deleted_at < excluded.source_updated_at)
  RETURNING id`;
}

/** The first delete of a row wins (a tombstone when unknown); a repeat changes nothing. */
function deleteSql(table: IdentityTable): string {
  const { known } = COLUMNS[table];
  return `
  INSERT INTO hookrun.${table} (id, deleted_at, source_updated_at${list(known, (c) => c)})
  SELECT d.id, d.at, d.at${list(known, (c) => `d.${c}`)} FROM unnest($1::text[], $2::timestamptz[]${textArrays(known)}) AS d(id, at${list(known, (c) => c)})
  ON CONFLICT (id) DO UPDATE SET deleted_at = excluded.deleted_at,
    source_updated_at = greatest(${table}.source_updated_at, excluded.source_updated_at)${list(known, (c) => `${c} = coalesce(${table}.${c}, excluded.${c})`)}
  WHERE ${table}.deleted_at IS NULL
  RETURNING id`;
}

const TABLES = (Object.keys(COLUMNS) as IdentityTable[]).map((table) => ({ table, upsert: upsertSql(table), delete: deleteSql(table) }));

/** One queued write; `values` in the order of the table's `fields` (upsert) or `known` (delete). */
interface IdentityOp {
  kind: 'upsert' | 'delete';
  id: string;
  at: Date;
  values: Array<string | null>;
}

const iso = (date: Date) => date.toISOString();

/** The statement's parameters: one array per column, in the statement's column order. */
function columnArrays(ops: IdentityOp[]): unknown[] {
  const width = ops[0]?.values.length ?? 0;
  return [ops.map((op) => op.id), ops.map((op) => iso(op.at)), ...Array.from({ length: width }, (_, i) => ops.map((op) => op.values[i] ?? null))];
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

/** A Clerk organization as the mirror keeps it. */
export interface OrganizationState {
  id: string;
  name: string | null;
  slug: string | null;
  at: Date;
}

/** A Clerk organization membership as the mirror keeps it. */
export interface MembershipState {
  id: string;
  organizationId: string | null;
  userId: string | null;
  role: string | null;
  at: Date;
}

/** A delete as the provider sends it: the id and when (Clerk: the event `timestamp`). */
export interface DeletedState {
  id: string;
  at: Date;
}

/** The queued user, organization and membership writes of a batch; `flush` applies them in the caller's transaction. */
export class IdentityMirrorWrites implements DeferredWrites {
  private queues: Record<IdentityTable, IdentityOp[]> = { users: [], organizations: [], memberships: [] };

  /** Queue a user upsert unless newer (or deleting) state is stored. */
  user(u: UserState): void {
    this.queues.users.push({ kind: 'upsert', id: u.id, at: u.at, values: [u.email, u.firstName, u.lastName, u.provider ?? 'clerk'] });
  }

  /** Queue a user delete (a tombstone of provider `provider`, default `clerk`, if unknown). */
  userDeleted(d: DeletedState & { provider?: string }): void {
    this.queues.users.push({ kind: 'delete', id: d.id, at: d.at, values: [d.provider ?? 'clerk'] });
  }

  /** Queue an organization upsert unless newer (or deleting) state is stored. */
  organization(o: OrganizationState): void {
    this.queues.organizations.push({ kind: 'upsert', id: o.id, at: o.at, values: [o.name, o.slug] });
  }

  /** Queue an organization delete (a tombstone if unknown). */
  organizationDeleted(d: DeletedState): void {
    this.queues.organizations.push({ kind: 'delete', id: d.id, at: d.at, values: [] });
  }

  /** Queue a membership upsert unless newer (or deleting) state is stored. */
  membership(m: MembershipState): void {
    this.queues.memberships.push({ kind: 'upsert', id: m.id, at: m.at, values: [m.organizationId, m.userId, m.role] });
  }

  /** Queue a membership delete; it fills organization/user where the row lacks them, when the event names them. */
  membershipDeleted(m: Omit<MembershipState, 'role'>): void {
    this.queues.memberships.push({ kind: 'delete', id: m.id, at: m.at, values: [m.organizationId, m.userId] });
  }

  /** Apply everything queued, table by table and round by round, on `db`; the queue is empty after. */
  async flush(db: Queryable): Promise<FlushResult> {
    const queues = this.queues;
    this.queues = { users: [], organizations: [], memberships: [] };
    let written = 0;
    for (const sql of TABLES) {
      // Within a round a row appears once, so its upsert and delete statements touch different rows.
      for (const round of rounds(queues[sql.table], (op) => op.id)) {
        const upserts = round.filter((op) => op.kind === 'upsert');
        const deletes = round.filter((op) => op.kind === 'delete');
        if (upserts.length > 0) written += (await db.query(sql.upsert, columnArrays(upserts))).length;
        if (deletes.length > 0) written += (await db.query(sql.delete, columnArrays(deletes))).length;
      }
    }
    return { written };
  }
}

/** The identity mirror as a batch family: `ctx.batch.of(IDENTITY_MIRROR).user(…)`. */
export const IDENTITY_MIRROR: WriteFamily<IdentityMirrorWrites> = { name: 'identity mirror', create: () => new IdentityMirrorWrites() };

/** Create or update a user now (a batch of one) unless newer (or deleting) state is already stored. */
export const upsertUser = (db: Queryable, user: UserState) => writeNow(IDENTITY_MIRROR, db, (w) => w.user(user));

/** Mark a user deleted at `at` now (tombstone if unknown); a repeat changes nothing. */
export const markUserDeleted = (db: Queryable, id: string, at: Date, provider?: string) =>
  writeNow(IDENTITY_MIRROR, db, (w) => w.userDeleted({ id, at, provider }));

/** Create or update an organization now unless newer (or deleting) state is already stored. */
export const upsertOrganization = (db: Queryable, org: OrganizationState) => writeNow(IDENTITY_MIRROR, db, (w) => w.organization(org));

/** Mark an organization deleted at `at` now (tombstone if unknown). */
export const markOrganizationDeleted = (db: Queryable, id: string, at: Date) => writeNow(IDENTITY_MIRROR, db, (w) => w.organizationDeleted({ id, at }));

/** Create or update a membership now unless newer (or deleting) state is already stored. */
export const upsertMembership = (db: Queryable, m: MembershipState) => writeNow(IDENTITY_MIRROR, db, (w) => w.membership(m));

/** Mark a membership deleted now; fills organization/user on a tombstone when the event names them. */
export const markMembershipDeleted = (db: Queryable, m: Omit<MembershipState, 'role'>) => writeNow(IDENTITY_MIRROR, db, (w) => w.membershipDeleted(m));
