import type { Config } from './config/config.js';
import { openDatabase } from './db/client.js';
import { explainDatabaseError } from './startup-errors.js';
import type { RunningService, ServiceOptions } from './service-assembly.js';

/** The service's types, defined beside its assembly and taken from here by everything that starts one. */
export type { RunningService, ServiceOptions };

/**
 * Assemble and start hookrun: open and migrate the database, build the
 * verifiers (a bad secret stops here), then serve, process and schedule.
 * The database opens first and the rest of hookrun (service-assembly.ts and
 * its ~250 modules) loads while it does: with a data dir, PGlite boots on its
 * own thread beside that load instead of after it.
 */
export async function startService(config: Config, options: ServiceOptions): Promise<RunningService> {
  const { log } = options;
  const ownsDb = !options.db;
  const opening =
    options.db ??
    openDatabase({
      databaseUrl: config.databaseUrl,
      pooler: config.pooler.mode,
      directUrl: config.pooler.directUrl,
      schema: config.schema,
      namedStatements: config.preparedStatements,
      dataDir: config.dataDir,
      fsync: config.embeddedFsync,
      onPoolError: (error) => log.warn({ err: { message: error.message } }, 'database connection lost; the pool reconnects on demand'),
      onListenUnheard: (error) => log.warn({ err: { message: error.message } }, 'LISTEN does not hear NOTIFY; polling covers it'),
      onListenLost: (error) => log.warn({ err: { message: error.message } }, 'LISTEN connection lost; opening it again (polling covers the gap)'),
    });
  const assembly = import('./service-assembly.js');
  assembly.catch(() => undefined); // awaited below; an open that fails first must not leave it unhandled
  const db = await opening;
  if (ownsDb && config.databaseUrl) {
    // One round trip before the rest: a server out of reach or a missing database is said as what to set (DATABASE_URL).
    const url = config.databaseUrl;
    await db.query('SELECT 1').catch(async (error: unknown) => {
      await db.close().catch(() => undefined);
      throw explainDatabaseError(error, url);
    });
  }
  let assembleService;
  try {
    ({ assembleService } = await assembly);
  } catch (error) {
    if (ownsDb) await db.close().catch(() => undefined);
    throw error;
  }
  return assembleService(config, options, db, ownsDb);
}
