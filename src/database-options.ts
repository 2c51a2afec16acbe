import type { Config } from './config/config.js';
import type { OpenOptions } from './db/database.js';

/**
 * The settings hookrun opens the configured database with, read from the
 * configuration in one place: `start`, `check`, `migrate` and every other CLI
 * command open it alike (EMBEDDED_FSYNC, the pooler, prepared statements).
 */
export function databaseOptions(config: Config): OpenOptions {
  return {
    databaseUrl: config.databaseUrl,
    pooler: config.pooler.mode,
    directUrl: config.pooler.directUrl,
    schema: config.schema,
    namedStatements: config.preparedStatements,
    dataDir: config.dataDir,
    fsync: config.embeddedFsync,
  };
}
