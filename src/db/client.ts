import type { Database, OpenOptions } from './database.js';

/**
 * Open the database: node-postgres when `databaseUrl` is set, otherwise PGlite
 * in `dataDir/pgdata`, guarded by an exclusive lock file. Only the driver in
 * use is loaded: importing both costs ~0.4 s of start-up.
 */
export async function openDatabase(options: OpenOptions): Promise<Database> {
  if (options.databaseUrl) {
    const { openPostgres } = await import('./postgres-database.js');
    return openPostgres(options.databaseUrl, options);
  }
  const { openPglite } = await import('./pglite-database.js');
  return openPglite(options);
}
