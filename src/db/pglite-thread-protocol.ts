/**
 * The messages between the main thread and the embedded database's thread
 * (pglite-thread.ts): a request carries an `id`, its reply the same `id` with
 * `rows` or `error`; a NOTIFY arrives unasked, tagged with its subscription.
 */

/** What the thread opens: the PGlite data directory (DATA_DIR/pgdata), and whether its fsyncs reach the disk. */
export interface ThreadData {
  pgdata: string;
  fsync: boolean;
}

/** One request to the database thread; `tx` routes a query into an open transaction. */
export type ThreadRequest =
  | { id: number; op: 'query'; text: string; params?: unknown[]; tx?: number }
  | { id: number; op: 'begin' | 'commit' | 'rollback'; tx: number }
  | { id: number; op: 'listen'; channel: string; sub: number }
  | { id: number; op: 'unlisten'; sub: number }
  | { id: number; op: 'close' };

/** The thread's answer to request `id` (id 0: the database is open, or why it is not). */
export interface ThreadReply {
  id: number;
  rows?: unknown[];
  error?: SerializedError;
}

/** A notification on the subscription `sub` (a `listen` request's number). */
export interface ThreadNotify {
  notify: number;
  payload: string;
}

/** An error as it crosses threads: structured clone keeps only message and stack of an Error, so the fields travel as data. */
export interface SerializedError {
  message: string;
  name: string;
  stack?: string;
  fields: Record<string, unknown>;
}

/** Never copied back: PGlite's query options hold the parser functions, which cannot be cloned. */
const SKIPPED_FIELDS = new Set(['message', 'name', 'stack', 'queryOptions']);

/**
 * Flatten an error thrown in the database thread: PostgreSQL's fields
 * (`code`, `detail`, `constraint`, …, see pg-protocol's DatabaseError) and
 * PGlite's `query` and `params` are kept; callers branch on `code`
 * (event-writer.ts retries row by row on classes 22, 23 and 54).
 */
export function serializeError(error: unknown): SerializedError {
  if (!(error instanceof Error)) return { message: String(error), name: 'Error', fields: {} };
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(error)) {
    if (SKIPPED_FIELDS.has(key) || typeof value === 'function') continue;
    if (value === null || ['string', 'number', 'boolean', 'bigint', 'undefined'].includes(typeof value)) fields[key] = value;
    else {
      try {
        fields[key] = structuredClone(value);
      } catch {
        // not cloneable (a handle, a function inside): left out
      }
    }
  }
  return { message: error.message, name: error.name, stack: error.stack, fields };
}

/** The same error on the main thread: its message, name, fields and the thread's stack. */
export function rebuildError(serialized: SerializedError): Error {
  const error = new Error(serialized.message);
  Object.assign(error, serialized.fields);
  Object.defineProperty(error, 'name', { value: serialized.name, writable: true, configurable: true, enumerable: false });
  if (serialized.stack) error.stack = serialized.stack;
  return error;
}
