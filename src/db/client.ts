import { createRequire } from 'node:module';
import { ConfigError } from '../errors.js';
import type { Database, OpenOptions } from './database.js';

/** The embedded database's package: a dependency, but one a PostgreSQL-only image leaves out (the Dockerfile's `postgres` target). */
const EMBEDDED_PACKAGE = '@electric-sql/pglite';

/**
 * Refuse, as a ConfigError (exit 78) saying what to do, when DATABASE_URL is
 * unset and PGlite is not installed: a module-not-found stack from the database
 * thread would say neither. Resolves the package without loading it.
 */
export function requireEmbeddedDatabase(): void {
  try {
    createRequire(import.meta.url).resolve(EMBEDDED_PACKAGE);
  } catch {
    throw new ConfigError(
      `DATABASE_URL is not set and the embedded database (${EMBEDDED_PACKAGE}) is not installed, as in an image built with --target postgres: set DATABASE_URL to your PostgreSQL, or build the image without --target postgres (the embedded database, its data on the /app/.data volume).`,
    );
  }
}

/**
 * Open the database: node-postgres when `databaseUrl` is set, otherwise PGlite
 * in `dataDir/pgdata` on its own thread, guarded by an exclusive lock file
 * (or an already-open `pglite`, adopted on this thread). Only the driver in
 * use is loaded: importing both costs ~0.4 s of start-up, and PGlite may be
 * absent altogether when DATABASE_URL is set.
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
  requireEmbeddedDatabase();
  const { openPgliteThread } = await import('./pglite-thread-client.js');
  return openPgliteThread(options.dataDir, options);
}
