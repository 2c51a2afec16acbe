import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { LEGACY_MIGRATIONS_FOLDER } from '../../src/db/legacy-layout.js';
import type { Queryable } from '../../src/db/database.js';
import { cachedPgdata, copyPgdata, PGLITE_VERSION, TEST_CACHE } from './pglite-cache.js';

/** The previous release's migrations, the first `count` of them (all by default), in a folder of their own. */
function legacyFolder(count?: number): string {
  const folder = mkdtempSync(join(tmpdir(), 'hookrun-legacy-'));
  cpSync(LEGACY_MIGRATIONS_FOLDER, folder, { recursive: true });
  const journalPath = join(folder, 'meta', '_journal.json');
  const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as { entries: unknown[] };
  if (count !== undefined) writeFileSync(journalPath, JSON.stringify({ ...journal, entries: journal.entries.slice(0, count) }));
  return folder;
}

/**
 * Make the previous release's layout exactly as it did: drizzle's migrator on
 * its migrations (tables in `public`, bookkeeping in
 * `drizzle.__drizzle_migrations`), the first `count` of them.
 */
export async function makeLegacyPostgres(url: string, count?: number): Promise<void> {
  const [{ drizzle }, { migrate }] = await Promise.all([import('drizzle-orm/node-postgres'), import('drizzle-orm/node-postgres/migrator')]);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await migrate(drizzle(client), { migrationsFolder: legacyFolder(count) });
    await seedLegacyRows({ query: async (text, params) => (await client.query(text, params)).rows });
  } finally {
    await client.end();
  }
}

/** The same on an embedded data dir (`dataDir/pgdata`), as the previous release's `hookrun start` left it. */
export async function makeLegacyDataDir(dataDir: string, count?: number): Promise<void> {
  const [{ drizzle }, { migrate }] = await Promise.all([import('drizzle-orm/pglite'), import('drizzle-orm/pglite/migrator')]);
  await copyPgdata(await cachedPgdata(INITDB), join(dataDir, 'pgdata'));
  const client = new PGlite(join(dataDir, 'pgdata'));
  try {
    await migrate(drizzle(client), { migrationsFolder: legacyFolder(count) });
    await seedLegacyRows({ query: async <T>(text: string, params?: unknown[]) => (await client.query<T>(text, params)).rows });
  } finally {
    await client.close();
  }
}

/** A PGlite data dir as its initdb leaves it (no table): opening a copy takes under a second, an initdb 4-5 s. */
const INITDB = join(TEST_CACHE, `pglite-initdb-${PGLITE_VERSION}.pgdata`);

/** Rows in the first migration's columns (the oldest layout a database can be in): three events, two cron runs, mirrors. */
async function seedLegacyRows(db: Queryable): Promise<void> {
  await db.query(`INSERT INTO public.webhook_events (source, key, type, payload, status) VALUES
    ('auth', 'old_1', 'user.created', '{"n":1}', 'processed'), ('payments', 'old_2', 'customer.created', '{"n":2}', 'pending'), ('auth', 'old_3', 'user.deleted', '{"n":3}', 'dead')`);
  await db.query(
    `INSERT INTO public.cron_runs (job, trigger, status, scheduled_for) VALUES ('nightly', 'schedule', 'succeeded', '2026-01-01T00:00:00Z'), ('nightly', 'manual', 'failed', NULL)`,
  );
  await db.query(`INSERT INTO public.users (id, email, source_updated_at) VALUES ('user_old', 'old@example.com', now())`);
  await db.query(`INSERT INTO public.customers (id, email, source_updated_at) VALUES ('cus_old', 'old@example.com', now())`);
  await db.query(`INSERT INTO public.subscriptions (id, customer_id, status, source_updated_at) VALUES ('sub_old', 'cus_old', 'active', now())`);
}

/** The shape of schema `schema`: columns (by name, not position), indexes and constraints, with the schema name taken out. */
export async function schemaShape(db: Queryable, schema: string): Promise<string[]> {
  const rows = await db.query<{ line: string }>(
    `SELECT table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, '') AS line
       FROM information_schema.columns WHERE table_schema = $1
     UNION ALL SELECT indexdef FROM pg_indexes WHERE schemaname = $1
     UNION ALL SELECT c.relname || ' ' || k.conname || ' ' || pg_get_constraintdef(k.oid)
       FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND k.contype <> 'n'`, // PostgreSQL 18 lists NOT NULL as constraints; PGlite's 17 does not
    [schema],
  );
  return rows.map((r) => r.line.replaceAll(`${schema}.`, '').replaceAll(`"${schema}".`, '')).sort();
}
