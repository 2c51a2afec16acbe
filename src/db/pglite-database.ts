import type { PGlite } from '@electric-sql/pglite';
import { drizzle } from 'drizzle-orm/pglite';
import { migrate } from 'drizzle-orm/pglite/migrator';
import { MIGRATIONS_FOLDER, type Database, type Orm } from './database.js';
import { pgliteTuning } from './pglite-tuning.js';
import * as schema from './schema.js';

/**
 * Adopt an already-open PGlite on the calling thread (tests hand an in-memory
 * one). The caller owns its lifetime: `close()` leaves it open. A data dir
 * opens on its own thread instead (pglite-thread-client.ts).
 */
export function wrapPglite(client: PGlite): Database {
  const orm = drizzle(client, { schema }) as unknown as Orm;
  const query = async <T>(text: string, params?: unknown[]): Promise<T[]> =>
    (await client.query<T>(text, params)).rows;
  return {
    kind: 'pglite',
    orm,
    query,
    tuning: pgliteTuning({ query }),
    transaction: (fn) =>
      client.transaction((tx) => fn({ query: async <T>(text: string, params?: unknown[]) => (await tx.query<T>(text, params)).rows })),
    listen: async (channel, onNotify) => {
      const unsubscribe = await client.listen(channel, onNotify);
      return async () => unsubscribe();
    },
    migrate: () => migrate(orm as never, { migrationsFolder: MIGRATIONS_FOLDER }),
    close: () => Promise.resolve(),
  };
}
