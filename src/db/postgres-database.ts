import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import { MIGRATIONS_FOLDER, type Database, type OpenOptions, type Orm } from './database.js';
import * as schema from './schema.js';

const MIGRATION_LOCK_KEY = 7_340_021; // any fixed number: serialises migrations across instances
const INT8_OID = 20;

/** A node-postgres pool as a `Database`: many hookrun instances share one PostgreSQL. */
export function openPostgres(url: string, options: OpenOptions): Database {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: 2000,
    idleTimeoutMillis: 30_000,
    query_timeout: options.queryTimeoutMs ?? 10_000,
    keepAlive: true,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
    },
  });
  // An idle client whose connection dies emits here; without a listener the process would crash.
  pool.on('error', (error) => options.onPoolError?.(error));
  const orm = drizzle(pool, { schema }) as unknown as Orm;
  const query = async <T>(text: string, params?: unknown[]): Promise<T[]> =>
    (await pool.query(text, params)).rows as T[];
  return {
    kind: 'postgres',
    orm,
    query,
    // Two batches side by side while a backlog lasts: the database works on one while this process runs the other's handlers.
    tuning: { lanes: 2 },
    async transaction(fn) {
      const client = await pool.connect();
      // pg-pool listens for errors only on idle clients: a socket error on a checked-out one would crash the process.
      let lost: Error | undefined;
      const onError = (error: Error) => (lost = error);
      client.on('error', onError);
      try {
        await client.query('BEGIN');
        const result = await fn({ query: async <T>(text: string, params?: unknown[]) => (await client.query(text, params)).rows as T[] });
        await client.query('COMMIT');
        return result;
      } catch (error) {
        if (!lost) await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.removeListener('error', onError);
        client.release(lost); // a lost connection is discarded, not pooled
      }
    },
    async listen(channel, onNotify) {
      const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000, keepAlive: true });
      client.on('error', () => undefined); // a lost LISTEN connection only costs latency: polling covers it
      client.on('notification', (message) => {
        if (message.channel === channel) onNotify(message.payload ?? '');
      });
      await client.connect();
      await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
      return async () => {
        await client.end().catch(() => undefined);
      };
    },
    async migrate() {
      const client = await pool.connect();
      try {
        await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
        await migrate(drizzle(client, { schema }), { migrationsFolder: MIGRATIONS_FOLDER });
      } finally {
        await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
        client.release();
      }
    },
    close: () => pool.end(),
  };
}
