import type { PGlite } from '@electric-sql/pglite';

/** Apply the committed migrations to a PGlite with drizzle's migrator, loaded only now (callers ask `hasPendingMigrations` first). */
export async function migratePglite(client: PGlite, migrationsFolder: string): Promise<void> {
  const [{ drizzle }, { migrate }] = await Promise.all([import('drizzle-orm/pglite'), import('drizzle-orm/pglite/migrator')]);
  await migrate(drizzle(client), { migrationsFolder });
}
