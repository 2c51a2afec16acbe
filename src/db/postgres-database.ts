import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { ConfigError } from '../errors.js';
import { MIGRATIONS_FOLDER, NOTHING_MIGRATED, type Database, type OpenOptions } from './database.js';
import { hasPendingMigrations } from './pending-migrations.js';
import { parseStoredPayload } from './stored-payload.js';
import { DEFAULT_SCHEMA, schemaRewrite } from './schema-name.js';
import { isPlannedOnce, StatementNames } from './statement-names.js';

const INT8_OID = 20;
/** json and jsonb: parsed so that an integer beyond 2^53 keeps its digits (stored-payload.ts). */
const JSON_OIDS = new Set([114, 3802]);
/** A statement waits at most this long for a lock before PostgreSQL gives up on it. */
const LOCK_TIMEOUT_MS = 5000;
/**
 * PostgreSQL's answers to a prepared name missing on the server connection
 * (26000) or already there (42P05): what a pooler in transaction mode that
 * nothing declared does to prepared statements, as it hands each transaction
 * to another server connection. Both come before the statement runs.
 */
const PREPARED_ELSEWHERE = new Set(['26000', '42P05']);

/** A node-postgres pool as a `Database`: many hookrun instances share one PostgreSQL. */
export function openPostgres(url: string, options: OpenOptions): Database {
  const statementTimeoutMs = options.queryTimeoutMs ?? 10_000;
  const pooled = options.pooler === 'session' || options.pooler === 'transaction';
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: 2000,
    idleTimeoutMillis: 30_000,
    query_timeout: statementTimeoutMs,
    // The client giving up does not stop the server: these make PostgreSQL itself end a statement that
    // waits too long (a lock, a stall), so its backend and its memory are freed (security review: 8 → 33 backends).
    // A pooler refuses them in the start-up packet: there they are the role's settings (docs/deploy.md).
    ...(pooled ? {} : { statement_timeout: statementTimeoutMs, lock_timeout: Math.min(LOCK_TIMEOUT_MS, statementTimeoutMs) }),
    keepAlive: true,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID
          ? (value: string) => Number(value)
          : JSON_OIDS.has(oid)
            ? parseStoredPayload
            : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
    },
  });
  // An idle client whose connection dies emits here; without a listener the process would crash.
  pool.on('error', (error) => options.onPoolError?.(error));
  let names = options.namedStatements ? new StatementNames() : undefined;
  const schema = options.schema ?? DEFAULT_SCHEMA;
  const inSchema = schemaRewrite(schema);
  /** A statement for node-postgres, in the configured schema: named when it is planned once (statement-names.ts), has parameters and a name is left for it. */
  const statement = (sql: string, params: unknown[] | undefined): pg.QueryConfig => {
    const text = inSchema(sql);
    const name = names && params && params.length > 0 && isPlannedOnce(sql) ? names.nameOf(text) : undefined;
    return name ? { name, text, values: params } : { text, values: params };
  };
  /**
   * Run a statement on `on` (the pool, or a transaction's client). When its
   * prepared name is missing or already there, prepared statements are off
   * from then on, for every connection: a statement outside a transaction
   * runs again unnamed (it did not run), one inside fails its transaction,
   * which its caller retries.
   */
  const run = async <T>(on: pg.Pool | pg.PoolClient, sql: string, params?: unknown[]): Promise<T[]> => {
    const config = statement(sql, params);
    try {
      return (await on.query(config)).rows as T[];
    } catch (error) {
      if (!config.name || !PREPARED_ELSEWHERE.has((error as { code?: string }).code ?? '')) throw error;
      if (names) {
        names = undefined;
        options.onPreparedRefused?.(error as Error);
      }
      if (on !== pool) throw error;
      return (await pool.query({ text: config.text, values: params })).rows as T[];
    }
  };
  const query = <T>(text: string, params?: unknown[]): Promise<T[]> => run<T>(pool, text, params);
  const db: Database = {
    kind: 'postgres',
    query,
    // Two batches side by side while a backlog lasts: the database works on one while this process runs the other's handlers.
    tuning: { lanes: 2, longestStatementMs: statementTimeoutMs + 1000, connections: options.poolSize ?? 10 },
    async transaction(fn) {
      const client = await pool.connect();
      // pg-pool listens for errors only on idle clients: a socket error on a checked-out one would crash the process.
      let lost: Error | undefined;
      const onError = (error: Error) => (lost = error);
      client.on('error', onError);
      try {
        await client.query('BEGIN');
        const result = await fn({ query: <T>(text: string, params?: unknown[]) => run<T>(client, text, params) });
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
    listen: async (channel, onNotify) => {
      if (options.directUrl) return listenWithReconnect(options.directUrl, channel, onNotify, options.onListenLost);
      if (options.pooler === 'transaction') throw new Error(LISTEN_NEEDS_SESSION);
      // A pooler in transaction mode that takes the start-up settings (so nothing said DATABASE_POOLER) swallows
      // NOTIFY: send one to ourselves and say so when it does not come back.
      const probe = `hookrun-listen-probe-${randomUUID()}`;
      let heard: () => void = () => undefined;
      const back = new Promise<void>((resolve) => (heard = resolve));
      const stop = await listenWithReconnect(url, channel, (payload) => (payload === probe ? heard() : onNotify(payload)), options.onListenLost);
      void checkHeard(query, channel, probe, back).then((ok) => ok || options.onListenUnheard?.(new Error(LISTEN_UNHEARD)));
      return stop;
    },
    async migrate() {
      if (options.directUrl) return migrateOver(options.directUrl, options);
      if (!(await hasPendingMigrations({ query }, MIGRATIONS_FOLDER))) return NOTHING_MIGRATED;
      const { applyMigrations } = await import('./migrator.js');
      return applyMigrations(db, schema, MIGRATIONS_FOLDER);
    },
    close: () => pool.end(),
  };
  return db;
}

/** Why a transaction pooler gets no LISTEN: the session that ran it goes back to the pool with the transaction. */
export const LISTEN_NEEDS_SESSION =
  'LISTEN does not last through a transaction pooler (DATABASE_POOLER=transaction): set DATABASE_DIRECT_URL for it; until then new events are found by polling';

/** How long a NOTIFY hookrun sends itself may take to come back over its LISTEN connection. */
const LISTEN_PROBE_MS = 5000;

/** Why NOTIFY is not heard: the LISTEN session is not the one the pooler gives the next transaction. */
export const LISTEN_UNHEARD =
  'a NOTIFY sent to ourselves did not come back within 5 s: DATABASE_URL looks like a pooler in transaction mode. Set DATABASE_POOLER=transaction and DATABASE_DIRECT_URL; until then new events from other instances are found by polling, within a second';

/** Send `probe` on `channel` and wait (bounded) for it to come back; false when it does not, or cannot be sent. */
async function checkHeard(
  query: (text: string, params?: unknown[]) => Promise<unknown>,
  channel: string,
  probe: string,
  back: Promise<void>,
): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await query('SELECT pg_notify($1, $2)', [channel, probe]);
    const late = new Promise<boolean>((resolve) => {
      timer = setTimeout(resolve, LISTEN_PROBE_MS, false);
      timer.unref(); // the check never keeps a stopping process alive
    });
    return await Promise.race([back.then(() => true), late]);
  } catch {
    return true; // the database is away: the worker's own error handling says so
  } finally {
    clearTimeout(timer);
  }
}

/** Apply the migrations over the direct connection (DATABASE_DIRECT_URL), as Prisma's `directUrl`, then close it. */
async function migrateOver(directUrl: string, options: OpenOptions) {
  const direct = openPostgres(directUrl, { ...options, pooler: 'none', directUrl: undefined, poolSize: 1 });
  try {
    await direct.query('SELECT 1').catch((error: Error) => {
      const { host, pathname } = new URL(directUrl);
      throw new ConfigError(
        `Cannot reach PostgreSQL at DATABASE_DIRECT_URL (${host}${pathname}: ${error.message}): set it to the database DATABASE_URL reaches, without the pooler, or unset it.`,
      );
    });
    return await direct.migrate();
  } finally {
    await direct.close();
  }
}

/** A lost LISTEN connection is opened again after this, doubling up to LISTEN_RETRY_MAX_MS. */
const LISTEN_RETRY_BASE_MS = 500;
const LISTEN_RETRY_MAX_MS = 30_000;

/**
 * LISTEN on a dedicated connection, and open it again when it dies (a
 * restarted database, a killed backend, a network cut), with backoff. After a
 * reconnect it calls `onNotify('')` once: notifications sent while it was down
 * are gone, so listeners look for what they missed. The first connect throws;
 * later losses are reported to `onLost` and never thrown.
 */
async function listenWithReconnect(
  url: string,
  channel: string,
  onNotify: (payload: string) => void,
  onLost?: (error: Error) => void,
): Promise<() => Promise<void>> {
  let stopped = false;
  let current: pg.Client | undefined;
  let timer: NodeJS.Timeout | undefined;
  let failures = 0;
  const open = async (): Promise<void> => {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000, keepAlive: true });
    let lost = false;
    const onGone = (error: Error) => {
      if (lost || stopped) return;
      lost = true;
      current = undefined;
      onLost?.(error);
      schedule();
    };
    client.on('error', onGone);
    client.on('end', () => onGone(new Error('the LISTEN connection ended')));
    client.on('notification', (message) => {
      if (message.channel === channel) onNotify(message.payload ?? '');
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    } catch (error) {
      lost = true;
      await client.end().catch(() => undefined);
      throw error;
    }
    if (stopped) return void (await client.end().catch(() => undefined));
    current = client;
  };
  const schedule = () => {
    if (stopped) return;
    const delayMs = Math.min(LISTEN_RETRY_MAX_MS, LISTEN_RETRY_BASE_MS * 2 ** Math.min(failures, 10));
    timer = setTimeout(() => {
      open().then(
        () => {
          failures = 0;
          onNotify(''); // wake the listener: what was sent while down was not delivered
        },
        (error: Error) => {
          failures++;
          onLost?.(error);
          schedule();
        },
      );
    }, delayMs);
  };
  await open();
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await current?.end().catch(() => undefined);
  };
}
