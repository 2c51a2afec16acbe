import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import pg from 'pg';
import { lockDataDir } from './data-dir-lock.js';
import * as schema from './schema.js';

/** The drizzle handle every query module takes; the same type over PGlite and node-postgres. */
export type Orm = PgDatabase<PgQueryResultHKT, typeof schema>;

/** Raw parameterised SQL, for the hot paths (batched ingest, claims) where one round trip matters. */
export interface Queryable {
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
}

/** One database connection (embedded or pooled), with the operations hookrun needs of it. */
export interface Database extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  readonly orm: Orm;
  /** Run `fn` in one transaction; keep it short (PGlite has a single session). */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Subscribe to a NOTIFY channel; returns the unsubscribe function. */
  listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>>;
  /** Apply the committed drizzle-kit migrations (safe to call from many instances at once). */
  migrate(): Promise<void>;
  close(): Promise<void>;
}

/** Where drizzle-kit writes the committed SQL migrations (repo root, also beside `dist/`). */
export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../drizzle', import.meta.url));

const MIGRATION_LOCK_KEY = 7_340_021; // any fixed number: serialises migrations across instances
const INT8_OID = 20;

/** Options that shape a connection; tests pass `pglite` to reuse an in-memory instance. */
export interface OpenOptions {
  databaseUrl?: string;
  dataDir?: string;
  /** An already-open PGlite (tests, in-memory). The caller owns its lifetime lock. */
  pglite?: PGlite;
  /** node-postgres pool size. */
  poolSize?: number;
  /** Client-side cap on any single query on PostgreSQL. */
  queryTimeoutMs?: number;
  /** Called when an idle pooled connection dies (the pool recovers by itself). */
  onPoolError?: (error: Error) => void;
}

/**
 * Open the database: node-postgres when `databaseUrl` is set, otherwise PGlite
 * in `dataDir/pgdata`, guarded by an exclusive lock file.
 */
export async function openDatabase(options: OpenOptions): Promise<Database> {
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options);
  if (options.pglite) return wrapPglite(options.pglite, () => Promise.resolve());
  if (!options.dataDir) throw new Error('openDatabase: need databaseUrl, dataDir or pglite');
  const release = lockDataDir(options.dataDir);
  try {
    const client = new PGlite(join(options.dataDir, 'pgdata'));
    await client.waitReady;
    return wrapPglite(client, async () => {
      await client.close();
      release();
    });
  } catch (error) {
    release();
    throw error;
  }
}

function wrapPglite(client: PGlite, closeClient: () => Promise<void>): Database {
  const orm = drizzlePglite(client, { schema }) as unknown as Orm;
  const query = async <T>(text: string, params?: unknown[]): Promise<T[]> =>
    (await client.query<T>(text, params)).rows;
  return {
    kind: 'pglite',
    orm,
    query,
    transaction: (fn) =>
      client.transaction((tx) => fn({ query: async <T>(text: string, params?: unknown[]) => (await tx.query<T>(text, params)).rows })),
    listen: async (channel, onNotify) => {
      const unsubscribe = await client.listen(channel, onNotify);
      return async () => unsubscribe();
    },
    migrate: () => migratePglite(orm as never, { migrationsFolder: MIGRATIONS_FOLDER }),
    close: closeClient,
  };
}

function openPostgres(url: string, options: OpenOptions): Database {
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
  const orm = drizzlePg(pool, { schema }) as unknown as Orm;
  const query = async <T>(text: string, params?: unknown[]): Promise<T[]> =>
    (await pool.query(text, params)).rows as T[];
  return {
    kind: 'postgres',
    orm,
    query,
    async transaction(fn) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await fn({ query: async <T>(text: string, params?: unknown[]) => (await client.query(text, params)).rows as T[] });
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.release();
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
        await migratePg(drizzlePg(client, { schema }), { migrationsFolder: MIGRATIONS_FOLDER });
      } finally {
        await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
        client.release();
      }
    },
    close: () => pool.end(),
  };
}
