import type { Database, MigrationReport } from './database.js';
import { upgradeLegacyLayout } from './legacy-layout.js';
import { readMigrations, type Migration } from './migration-files.js';
import { quoteIdentifier } from './schema-name.js';

/** Any fixed number: serialises migrations across instances (held until the migration's transaction ends). */
const MIGRATION_LOCK_KEY = 7_340_021;

/** drizzle-kit's own first statement of the baseline; the schema is made (or found made by an administrator) before it. */
const CREATE_OWN_SCHEMA = /^\s*CREATE SCHEMA "hookrun";?\s*$/;

/**
 * Apply the committed migrations in one transaction, under an advisory lock,
 * with drizzle's bookkeeping (same table shape, hash and `created_at` rule) in
 * `<schema>.__drizzle_migrations`, never in `drizzle.__drizzle_migrations`,
 * which a product using drizzle owns. A database the previous release made
 * (tables in `public`) is moved into the schema first (legacy-layout.ts). Runs
 * through the driver's `transaction`, so HOOKRUN_SCHEMA's rewrite applies to
 * the migration SQL too. Not drizzle's migrate(): it creates the bookkeeping
 * schema before the baseline's `CREATE SCHEMA` and cannot rewrite the SQL.
 */
export async function applyMigrations(db: Pick<Database, 'transaction'>, schema: string, folder: string): Promise<MigrationReport> {
  const migrations = readMigrations(folder);
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    const [namespace] = await tx.query<{ present: boolean }>('SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1) AS present', [schema]);
    if (!namespace?.present) await tx.query(`CREATE SCHEMA ${quoteIdentifier(schema)}`);
    await tx.query('CREATE TABLE IF NOT EXISTS hookrun.__drizzle_migrations (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)');
    const [row] = await tx.query<{ last: string | number | null }>('SELECT max(created_at) AS last FROM hookrun.__drizzle_migrations');
    let last = row?.last === null || row?.last === undefined ? undefined : Number(row.last);
    const record = (migration: Migration) =>
      tx.query('INSERT INTO hookrun.__drizzle_migrations (hash, created_at) VALUES ($1, $2)', [migration.hash, migration.when]);
    let movedFromPublic: string[] = [];
    if (last === undefined && migrations[0]) {
      movedFromPublic = await upgradeLegacyLayout(tx, schema);
      if (movedFromPublic.length > 0) {
        await record(migrations[0]); // the moved tables are the baseline's
        last = migrations[0].when;
      }
    }
    const applied: string[] = [];
    for (const migration of migrations) {
      if (last !== undefined && migration.when <= last) continue;
      for (const statement of migration.statements) if (!CREATE_OWN_SCHEMA.test(statement)) await tx.query(statement);
      await record(migration);
      applied.push(migration.tag);
    }
    return { applied, movedFromPublic };
  });
}
