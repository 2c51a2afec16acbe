import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { drizzle } from 'drizzle-orm/pglite';
import { migrate } from 'drizzle-orm/pglite/migrator';
import { MIGRATIONS_FOLDER, type Database, type OpenOptions, type Orm } from './database.js';
import { lockDataDir } from './data-dir-lock.js';
import { createWalSync } from './wal-sync.js';
import * as schema from './schema.js';

/**
 * PGlite's own start parameters plus a smaller buffer pool: hookrun's working
 * set is small, and 16 MB instead of 128 MB saves ~50 MB of RSS and ~0.15 s
 * of start-up. PGlite's own fsync is a no-op whatever it is set to (it never
 * reaches the OS), so durability comes from `flushToDisk` (wal-sync.ts).
 */
const START_PARAMS = [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB'];

/** Open (or adopt) an embedded PGlite; a data dir is locked for this process alone. */
export async function openPglite(options: OpenOptions): Promise<Database> {
  if (options.pglite) return wrapPglite(options.pglite, () => Promise.resolve(), undefined);
  if (!options.dataDir) throw new Error('openDatabase: need databaseUrl, dataDir or pglite');
  const release = lockDataDir(options.dataDir);
  try {
    const pgdata = join(options.dataDir, 'pgdata');
    const client = new PGlite(pgdata, { startParams: START_PARAMS });
    await client.waitReady;
    const closeClient = async () => {
      await client.close();
      release();
    };
    return wrapPglite(client, closeClient, options.fsync === false ? undefined : createWalSync(pgdata));
  } catch (error) {
    release();
    throw error;
  }
}

/** A handler may hold the one session inside a shared batch this long before its type runs alone. */
const IN_TRANSACTION_BUDGET_MS = 1000;
/** The longest the worker lets the receivers' queued inserts go first before it claims anyway. */
const YIELD_TO_INGEST_MS = 200;
/** PGlite has no autovacuum: each event leaves two dead row versions (claim, settle) in the heap and indexes. */
const VACUUM_EVERY_EVENTS = 5000;

function wrapPglite(client: PGlite, closeClient: () => Promise<void>, flushToDisk: (() => void) | undefined): Database {
  const orm = drizzle(client, { schema }) as unknown as Orm;
  const query = async <T>(text: string, params?: unknown[]): Promise<T[]> =>
    (await client.query<T>(text, params)).rows;
  return {
    kind: 'pglite',
    orm,
    query,
    flushToDisk,
    tuning: {
      lanes: 1, // one session: a second batch would only wait for the first
      longestStatementMs: 0, // one session: no statement ever overlaps another
      inTransactionBudgetMs: IN_TRANSACTION_BUDGET_MS,
      yieldToIngestMs: YIELD_TO_INGEST_MS,
      idleMaintenance: { every: VACUUM_EVERY_EVENTS, run: async () => void (await query('VACUUM webhook_events')) },
    },
    transaction: (fn) =>
      client.transaction((tx) => fn({ query: async <T>(text: string, params?: unknown[]) => (await tx.query<T>(text, params)).rows })),
    listen: async (channel, onNotify) => {
      const unsubscribe = await client.listen(channel, onNotify);
      return async () => unsubscribe();
    },
    migrate: () => migrate(orm as never, { migrationsFolder: MIGRATIONS_FOLDER }),
    close: closeClient,
  };
}

