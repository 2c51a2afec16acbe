import { fileURLToPath } from 'node:url';
import type { PGlite } from '@electric-sql/pglite';
/** Raw parameterised SQL, for the hot paths (batched ingest, claims) where one round trip matters. */
export interface Queryable {
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
}

/**
 * How the inbox worker should drive this database, decided by the driver so
 * the worker never asks which one it is: PGlite is one session (on its own
 * thread with a data dir), PostgreSQL serves many connections.
 */
export interface WorkerTuning {
  /** Batches claimed side by side while a backlog lasts (SKIP LOCKED keeps them disjoint). */
  readonly lanes: number;
  /** Longest a handler may hold a shared batch transaction before its event type runs alone; undefined: the handler timeout. */
  readonly inTransactionBudgetMs?: number;
  /** Let the receivers' queued inserts go first, waiting at most this long before each claim. */
  readonly yieldToIngestMs?: number;
  /**
   * The longest a statement on another session can run (PostgreSQL's
   * statement_timeout); 0 where statements never overlap (PGlite's one
   * session). Retention waits this long between saving keys and deleting rows.
   */
  readonly longestStatementMs: number;
  /**
   * Transactions the handle serves at once (a pool's size); undefined: no
   * bound worth keeping (PGlite runs a flow handler outside its settle's
   * transaction). Flow-controlled handlers hold one for the length of a run,
   * so fewer of them run at once than this, leaving room for the inbox.
   */
  readonly connections?: number;
  /** Housekeeping when the worker goes idle after `every` processed events (PGlite: VACUUM, it has no autovacuum). */
  readonly idleMaintenance?: { every: number; run(): Promise<void> };
}

/** One database connection (embedded or pooled), with the operations hookrun needs of it. */
export interface Database extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  readonly tuning: WorkerTuning;
  /** Run `fn` in one transaction; keep it short (PGlite has a single session). */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Subscribe to a NOTIFY channel; returns the unsubscribe function. */
  listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>>;
  /** Apply the committed drizzle-kit migrations, moving a previous release's tables out of `public` first (safe to call from many instances at once). */
  migrate(): Promise<MigrationReport>;
  close(): Promise<void>;
}

/** What `migrate()` did: the migrations it applied, and the tables it moved out of `public` (a previous release's database). */
export interface MigrationReport {
  applied: string[];
  movedFromPublic: string[];
}

/** `migrate()` when nothing was pending. */
export const NOTHING_MIGRATED: MigrationReport = Object.freeze({ applied: [], movedFromPublic: [] }) as MigrationReport;

/** Where drizzle-kit writes the committed SQL migrations (repo root, also beside `dist/`). */
export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../drizzle', import.meta.url));

/** Options that shape a connection; tests pass `pglite` to reuse an in-memory instance. */
export interface OpenOptions {
  databaseUrl?: string;
  /** The schema hookrun's tables live in (HOOKRUN_SCHEMA; default `hookrun`): the SQL is rewritten to it. */
  schema?: string;
  dataDir?: string;
  /** An already-open PGlite (tests, in-memory), used on the calling thread. The caller owns its lifetime lock. */
  pglite?: PGlite;
  /** Embedded: PostgreSQL's fsyncs reach the disk, each commit's WAL before it returns (default true; EMBEDDED_FSYNC=off for development). */
  fsync?: boolean;
  /**
   * PostgreSQL through a pooler (DATABASE_POOLER): `session` and `transaction`
   * send no settings in the start-up packet (PgBouncer refuses them);
   * `transaction` also keeps LISTEN off the pooled URL.
   */
  pooler?: 'none' | 'session' | 'transaction';
  /** PostgreSQL without the pooler (DATABASE_DIRECT_URL): migrations and LISTEN go there. */
  directUrl?: string;
  /** node-postgres pool size. */
  poolSize?: number;
  /** PostgreSQL: prepare the statements planned once (statement-names.ts) on each connection (`DATABASE_PREPARED_STATEMENTS`). */
  namedStatements?: boolean;
  /** Client-side cap on any single query on PostgreSQL. */
  queryTimeoutMs?: number;
  /** Called when a LISTEN connection dies or cannot be opened again (it is retried with backoff). */
  onListenLost?: (error: Error) => void;
  /** Called when a NOTIFY sent to ourselves does not come back over LISTEN (a transaction pooler DATABASE_POOLER does not name). */
  onListenUnheard?: (error: Error) => void;
  /** Called when an idle pooled connection dies (the pool recovers by itself). */
  onPoolError?: (error: Error) => void;
  /** Called once when a prepared statement is missing on, or already on, its server connection (a transaction pooler nothing declared): prepared statements are off from then on. */
  onPreparedRefused?: (error: Error) => void;
}
