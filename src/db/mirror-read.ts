import type { Queryable } from './database.js';

/** The mirror tables the shipped handlers keep, and the columns a person reads first. */
export const MIRROR_TABLES = {
  users: ['id', 'email', 'first_name', 'last_name', 'deleted_at', 'source_updated_at'],
  organizations: ['id', 'name', 'slug', 'deleted_at', 'source_updated_at'],
  memberships: ['id', 'organization_id', 'user_id', 'role', 'deleted_at', 'source_updated_at'],
  customers: ['id', 'email', 'user_id', 'deleted_at', 'source_updated_at'],
  subscriptions: ['id', 'customer_id', 'status', 'price_id', 'current_period_end', 'cancel_at_period_end', 'source_updated_at'],
} as const;

/** One of the mirror tables' names. */
export type MirrorTable = keyof typeof MIRROR_TABLES;

/**
 * Read a mirror table, most recently changed first (by `source_updated_at`,
 * then id), for `hookrun mirror`, the admin API and the dashboard: the way to
 * see "the user is in the users table" on the embedded database. The table
 * name comes from MIRROR_TABLES, never from the caller's text.
 */
export async function listMirrorRows(db: Queryable, table: MirrorTable, options: { limit: number; search?: string }): Promise<Array<Record<string, unknown>>> {
  const columns = MIRROR_TABLES[table];
  const searchable = columns.filter((c) => c === 'id' || c === 'email' || c === 'name' || c.endsWith('_id'));
  const where = options.search ? `WHERE ${searchable.map((c) => `${c} ILIKE $2`).join(' OR ')}` : '';
  return db.query(
    `SELECT ${columns.join(', ')} FROM hookrun.${table} ${where} ORDER BY source_updated_at DESC, id LIMIT $1`,
    options.search ? [options.limit, `%${options.search.replace(/[\\%_]/g, (m) => `\\${m}`)}%`] : [options.limit],
  );
}
