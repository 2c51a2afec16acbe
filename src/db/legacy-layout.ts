import { join } from 'node:path';
import { MIGRATIONS_FOLDER, type Queryable } from './database.js';
import { readMigrations } from './migration-files.js';
import { quoteIdentifier } from './schema-name.js';

/** The previous release's migrations (tables in `public`, bookkeeping in `drizzle.__drizzle_migrations`): read only to upgrade what it made. */
export const LEGACY_MIGRATIONS_FOLDER = join(MIGRATIONS_FOLDER, 'legacy');

/** Every table the previous release's migrations make, all moved together. */
const LEGACY_TABLES = [
  'webhook_events',
  'webhook_event_keys',
  'event_attempts',
  'cron_runs',
  'cron_pauses',
  'pages',
  'admin_sessions_revoked',
  'alert_claims',
  'users',
  'organizations',
  'memberships',
  'customers',
  'subscriptions',
];

/**
 * Move a database the previous release made into `schema`, inside the
 * migration's transaction: found only when `public.webhook_events` exists and
 * `drizzle.__drizzle_migrations` holds at least one of the previous release's
 * migration hashes (a product's own `public.users` is never taken for
 * hookrun's). Its migrations not yet applied (by hash: a product's rows in the
 * same table may be newer) run first, in `public`; then each table moves
 * (`ALTER TABLE … SET SCHEMA`: its sequence, indexes and constraints follow),
 * and only hookrun's rows leave `drizzle.__drizzle_migrations` (the table and
 * the schema are dropped if nothing else is left in them). Returns the moved
 * tables, none when there is nothing to upgrade.
 */
export async function upgradeLegacyLayout(tx: Queryable, schema: string, folder: string = LEGACY_MIGRATIONS_FOLDER): Promise<string[]> {
  const [found] = await tx.query<{ tables: boolean; bookkeeping: boolean }>(
    "SELECT to_regclass('public.webhook_events') IS NOT NULL AS tables, to_regclass('drizzle.__drizzle_migrations') IS NOT NULL AS bookkeeping",
  );
  if (!found?.tables || !found.bookkeeping) return [];
  const legacy = readMigrations(folder);
  const hashes = legacy.map((migration) => migration.hash);
  const recorded = new Set(
    (await tx.query<{ hash: string }>('SELECT hash FROM drizzle.__drizzle_migrations WHERE hash = ANY($1::text[])', [hashes])).map((r) => r.hash),
  );
  if (recorded.size === 0) return [];
  await tx.query('SET LOCAL search_path TO public'); // the previous release's SQL names its tables unqualified
  for (const migration of legacy) {
    if (!recorded.has(migration.hash)) for (const statement of migration.statements) await tx.query(statement);
  }
  await tx.query('SET LOCAL search_path TO DEFAULT');
  for (const table of LEGACY_TABLES) await tx.query(`ALTER TABLE public.${table} SET SCHEMA ${quoteIdentifier(schema)}`);
  await tx.query('DELETE FROM drizzle.__drizzle_migrations WHERE hash = ANY($1::text[])', [hashes]);
  await dropIfEmpty(tx);
  return LEGACY_TABLES;
}

/** Remove `drizzle.__drizzle_migrations` and then the `drizzle` schema when hookrun's rows were all they held. */
async function dropIfEmpty(tx: Queryable): Promise<void> {
  const [rows] = await tx.query<{ empty: boolean }>('SELECT NOT EXISTS (SELECT 1 FROM drizzle.__drizzle_migrations) AS empty');
  if (!rows?.empty) return;
  await tx.query('DROP TABLE drizzle.__drizzle_migrations');
  const [schema] = await tx.query<{ empty: boolean }>(
    `SELECT NOT EXISTS (SELECT 1 FROM pg_class WHERE relnamespace = n.oid) AND NOT EXISTS (SELECT 1 FROM pg_proc WHERE pronamespace = n.oid)
            AND NOT EXISTS (SELECT 1 FROM pg_type WHERE typnamespace = n.oid) AS empty
     FROM pg_namespace n WHERE n.nspname = 'drizzle'`,
  );
  if (schema?.empty) await tx.query('DROP SCHEMA drizzle');
}
