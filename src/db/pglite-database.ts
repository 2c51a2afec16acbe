import type { PGlite } from '@electric-sql/pglite';
import { MIGRATIONS_FOLDER, type Database } from './database.js';
import { hasPendingMigrations } from './pending-migrations.js';
import { migratePglite } from './pglite-migrate.js';
import { pgliteTuning } from './pglite-tuning.js';

/**
 * Adopt an already-open PGlite on the calling thread (tests hand an in-memory
 * one). The caller owns its lifetime: `close()` leaves it open. A data dir
 * opens on its own thread instead (pglite-thread-client.ts).
 */
export function wrapPglite(client: PGlite): Database {
  const query = async <T>(text: string, params?: unknown[]): Promise<T[]> =>
    (await client.query<T>(text, params)).rows;
  return {
    kind: 'pglite',
    query,
    tuning: pgliteTuning({ query }),
    transaction: (fn) =>
      client.transaction((tx) => fn({ query: async <T>(text: string, params?: unknown[]) => (await tx.query<T>(text, params)).rows })),
    listen: async (channel, onNotify) => {
      const unsubscribe = await client.listen(channel, onNotify);
      return async () => unsubscribe();
    },
    async migrate() {
      if (await hasPendingMigrations({ query }, MIGRATIONS_FOLDER)) await migratePglite(client, MIGRATIONS_FOLDER);
    },
    close: () => Promise.resolve(),
  };
}
