import type { Database, OpenOptions } from './database.js';

/**
 * Open the database: node-postgres when `databaseUrl` is set, otherwise PGlite
 * in `dataDir/pgdata` on its own thread, guarded by an exclusive lock file
 * (or an already-open `pglite`, adopted on this thread). Only the driver in
 * use is loaded: importing both costs ~0.4 s of start-up.
 */
export async function openDatabase(options: OpenOptions): Promise<Database> {
  if (options.databaseUrl) {
    const { openPostgres } = await import('./postgres-database.js');
    return openPostgres(options.databaseUrl, options);
  }
  if (options.pglite) {
    const { wrapPglite } = await import('./pglite-database.js');
    return wrapPglite(options.pglite, options.schema);
  }
  if (!options.dataDir) throw new Error('openDatabase: need databaseUrl, dataDir or pglite');
  const { openPgliteThread } = await import('./pglite-thread-client.js');
  return openPgliteThread(options.dataDir, options);
}
