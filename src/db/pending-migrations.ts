import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Queryable } from './database.js';

/** The newest migration's timestamp in drizzle-kit's journal: what drizzle's migrator records as `created_at` once applied. */
function newestMigrationMillis(migrationsFolder: string): number {
  const journal = JSON.parse(readFileSync(join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as { entries: Array<{ when: number }> };
  return Math.max(0, ...journal.entries.map((entry) => entry.when));
}

/**
 * Whether the database lacks a committed migration, by drizzle's own rule
 * (a migration is applied when its folder time is not after the newest
 * `created_at` in `hookrun.__drizzle_migrations`). Start-up asks this first
 * and loads the migrator (migrator.ts: every migration file, and the check
 * for a previous release's tables in `public`) only when something is to be
 * applied.
 */
export async function hasPendingMigrations(db: Queryable, migrationsFolder: string): Promise<boolean> {
  try {
    const [row] = await db.query<{ last: string | number | null }>('SELECT max(created_at) AS last FROM hookrun.__drizzle_migrations');
    return row?.last === null || row?.last === undefined || Number(row.last) < newestMigrationMillis(migrationsFolder);
  } catch {
    return true; // no schema or table yet (a fresh database, or one the previous release made in public): the migrator sees to it
  }
}
