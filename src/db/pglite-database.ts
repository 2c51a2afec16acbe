import type { PGlite } from '@electric-sql/pglite';
import { MIGRATIONS_FOLDER, NOTHING_MIGRATED, type Database } from './database.js';
import { hasPendingMigrations } from './pending-migrations.js';
import { pgliteTuning } from './pglite-tuning.js';
import { DEFAULT_SCHEMA, schemaRewrite } from './schema-name.js';
import { JSON_PARSERS } from './stored-payload.js';

/**
 * Adopt an already-open PGlite on the calling thread (tests hand an in-memory
 * one). The caller owns its lifetime: `close()` leaves it open. A data dir
 * opens on its own thread instead (pglite-thread-client.ts).
 *
 * From then on the instance reads json and jsonb as hookrun's drivers do
 * (stored-payload.ts), for every query on it: set on the instance once, as the
 * embedded thread sets them when it opens. Given with each query instead,
 * PGlite copies its whole table of parsers (300-odd types) per query, which
 * was about 130 µs of a simple query's 300.
 */
export function wrapPglite(client: PGlite, schema: string = DEFAULT_SCHEMA): Database {
  Object.assign(client.parsers, JSON_PARSERS.parsers);
  const inSchema = schemaRewrite(schema);
  const query = async <T>(text: string, params?: unknown[]): Promise<T[]> => (await client.query<T>(inSchema(text), params)).rows;
  const db: Database = {
    kind: 'pglite',
    query,
    tuning: pgliteTuning({ query }),
    transaction: (fn) =>
      client.transaction((tx) => fn({ query: async <T>(text: string, params?: unknown[]) => (await tx.query<T>(inSchema(text), params)).rows })),
    listen: async (channel, onNotify) => {
      const unsubscribe = await client.listen(channel, onNotify);
      return async () => unsubscribe();
    },
    async migrate() {
      if (!(await hasPendingMigrations({ query }, MIGRATIONS_FOLDER))) return NOTHING_MIGRATED;
      const { applyMigrations } = await import('./migrator.js');
      return applyMigrations(db, schema, MIGRATIONS_FOLDER);
    },
    close: () => Promise.resolve(),
  };
  return db;
}
