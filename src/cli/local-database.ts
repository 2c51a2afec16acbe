import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config.js';
import { openDatabase, type Database } from '../db/client.js';
import { LOCK_FILE_NAME, isProcessAlive } from '../db/data-dir-lock.js';

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

/** Open and migrate the configured database for a one-shot CLI command. */
export async function openCliDatabase(config: Config): Promise<Database> {
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 2 });
  try {
    await db.migrate();
    return db;
  } catch (error) {
    await db.close().catch(() => undefined);
    throw error;
  }
}
