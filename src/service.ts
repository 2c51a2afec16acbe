import type { Config } from './config/config.js';
import { databaseOptions } from './database-options.js';
import { openDatabase } from './db/client.js';
import type { Database } from './db/database.js';
import type { Logger } from './log.js';
import { explainDatabaseError } from './startup-errors.js';
import type { RunningService, ServiceOptions, StopOptions } from './service-assembly.js';

/** The service's types, defined beside its assembly and taken from here by everything that starts one. */
export type { RunningService, ServiceOptions, StopOptions };

/**
 * Assemble and start hookrun: open and migrate the database, build the
 * verifiers (a bad secret stops here), then serve, process and schedule.
 * The database opens first and the rest of hookrun (service-assembly.ts and
 * its ~250 modules) loads while it does: with a data dir, PGlite boots on its
 * own thread beside that load instead of after it.
 */
export async function startService(config: Config, options: ServiceOptions): Promise<RunningService> {
  const ownsDb = !options.db;
  const opening = options.db ?? openServiceDatabase(config, options.log);
  const assembly = import('./service-assembly.js');
  assembly.catch(() => undefined); // awaited below; an open that fails first must not leave it unhandled
  const db = await opening;
  let assembleService;
  try {
    ({ assembleService } = await assembly);
  } catch (error) {
    if (ownsDb) await db.close().catch(() => undefined);
    throw error;
  }
  return assembleService(config, options, db, ownsDb);
}

/**
 * Open the configured database as `hookrun start` does, and (PostgreSQL) make
 * one round trip, so a server out of reach or a missing database is a
 * ConfigError saying what to set (DATABASE_URL) before anything else runs.
 * `hookrun check` opens it with this too; without `log`, connection trouble
 * after the open goes unlogged (a caller that closes at once has none to see).
 */
export async function openServiceDatabase(config: Config, log?: Logger): Promise<Database> {
  const db = await openDatabase({
    ...databaseOptions(config),
    onPoolError: (error) => log?.warn({ err: { message: error.message } }, 'database connection lost; the pool reconnects on demand'),
    onListenUnheard: (error) => log?.warn({ err: { message: error.message } }, 'LISTEN does not hear NOTIFY; polling covers it'),
    onPreparedRefused: (error) =>
      log?.warn(
        { err: { message: error.message } },
        'a prepared statement was missing on, or already on, its server connection: DATABASE_URL looks like a pooler in transaction mode. Prepared statements are off from now on; set DATABASE_POOLER=transaction (and DATABASE_DIRECT_URL) to say so',
      ),
    onListenLost: (error) => log?.warn({ err: { message: error.message } }, 'LISTEN connection lost; opening it again (polling covers the gap)'),
  });
  if (config.databaseUrl) {
    const url = config.databaseUrl;
    await db.query('SELECT 1').catch(async (error: unknown) => {
      await db.close().catch(() => undefined);
      throw explainDatabaseError(error, url);
    });
  }
  return db;
}
