import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config/config.js';
import { databaseOptions } from '../database-options.js';
import { openDatabase } from '../db/client.js';
import type { Database, OpenOptions } from '../db/database.js';
import { LOCK_FILE_NAME, isProcessAlive } from '../db/data-dir-lock.js';
import { warn } from './output.js';

/**
 * The pid of a live hookrun that holds the embedded DATA_DIR, if any. PGlite
 * serves one process only, so while the server runs the CLI must go through
 * its admin API instead of opening the files. Always undefined on PostgreSQL.
 */
export function embeddedHolderPid(config: Config): number | undefined {
  if (config.databaseUrl) return undefined;
  try {
    const pid = Number(readFileSync(join(config.dataDir, LOCK_FILE_NAME), 'utf8').trim());
    return isProcessAlive(pid) ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * How long the CLI asks a local server which database it uses. Nothing
 * listening answers at once (connection refused); a busy server may take a
 * second, and 300 ms let the warning vanish under load.
 */
const PROBE_TIMEOUT_MS = 2000;

/**
 * Warn when this command is about to read the embedded DATA_DIR while the
 * hookrun listening on PORT runs on PostgreSQL: a second terminal without
 * DATABASE_URL would otherwise show stale or empty data without a word.
 */
async function warnIfServerUsesPostgres(config: Config): Promise<void> {
  if (config.databaseUrl) return;
  try {
    const res = await fetch(`http://127.0.0.1:${config.port}/ready`, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
    const body = (await res.json()) as { database?: unknown };
    if (body.database === 'postgres') {
      warn(
        `hookrun: warning: the hookrun on port ${config.port} uses PostgreSQL, but this command has no DATABASE_URL and reads the embedded database in ${config.dataDir}. Set DATABASE_URL (or put it in .env) to see the server's data.\n`,
      );
    }
  } catch {
    // nothing listens there, or it is not hookrun: nothing to warn about
  }
}

/** The configured database as a one-shot CLI command opens it (`migrate` and the rest): the settings `start` opens it with, EMBEDDED_FSYNC included, on a small pool. */
export function cliDatabaseOptions(config: Config, poolSize: number): OpenOptions {
  return { ...databaseOptions(config), poolSize };
}

/** Open and migrate the configured database for a one-shot CLI command. */
export async function openCliDatabase(config: Config): Promise<Database> {
  await warnIfServerUsesPostgres(config);
  const db = await openDatabase(cliDatabaseOptions(config, 2));
  try {
    await db.migrate();
    return db;
  } catch (error) {
    await db.close().catch(() => undefined);
    throw error;
  }
}
