import type { Queryable } from './database.js';

/** The NOTIFY channel a committed insert (event-writer.ts) or a replay signals; workers LISTEN on it. */
export const EVENTS_CHANNEL = 'hookrun_events';

/** One event as a worker holds it after a claim. `attempts` already counts this claim. */
export interface ClaimedEvent {
  id: number;
  source: string;
  key: string;
  type: string;
  payload: unknown;
  attempts: number;
  receivedAt: Date;
  lockedUntil: Date;
  /** Which of its handlers are done with it (several handlers per event); null until one settles apart from the others. */
  deliveries: Deliveries | null;
  /** A captured database change's row identity (`schema.table` and its key): its changes keep commit order. */
  orderKey?: string | null;
  /** A debounced run: the earlier events folded into it (flow control). */
  debouncedIds?: readonly number[];
  /** A batch run (flow control): every member, and the members its handler sent to dead (id → reason). */
  batch?: { events: readonly ClaimedEvent[]; dead: Map<number, string> };
}

/** One handler's finished delivery of an event: it will not run again until a replay. */
export interface FinishedDelivery {
  /** `queued`: handed to the handler's flow control, which finishes it (handler_deliveries). */
  status: 'processed' | 'dead' | 'queued';
  error?: string;
}

/**
 * The per-handler state of an event with several handlers, kept on its row:
 * `done` by handler name; `only`, after a replay of one handler, the handlers
 * that may run (the others count as done).
 */
export interface Deliveries {
  done: Record<string, FinishedDelivery>;
  only?: string[];
}

/** One handler's run within an attempt, recorded in `event_attempts` (handler null: no handler ran). */
export interface HandlerRun {
  handler: string | null;
  outcome: 'processed' | 'ignored' | 'failed' | 'dead' | 'waiting';
  error?: string;
  startedAt?: number;
  durationMs?: number;
}

/** When an attempt's handler started (ms epoch) and how long it took; recorded in `event_attempts`. */
export interface AttemptTiming {
  startedAt: number;
  durationMs: number;
}

/**
 * The terminal or retry state a worker writes back for one claim (with its
 * timing when a handler ran). `runs`: one per handler that ran (absent: one
 * row for the event, from `timing`); `deliveries`: the row's new per-handler
 * state (absent: unchanged).
 */
export type Settlement = (
  | { id: number; attempts: number; status: 'processed' | 'ignored' }
  | { id: number; attempts: number; status: 'failed'; error: string; nextAttemptAt: Date }
  | { id: number; attempts: number; status: 'dead'; error: string }
  | { id: number; attempts: number; status: 'waiting' }
) & { timing?: AttemptTiming; runs?: HandlerRun[]; deliveries?: Deliveries | null; handler?: string };

/**
 * Due = `pending`; or `failed` whose next_attempt_at has come; or `processing`
 * whose lease ran out (its worker crashed). `pending` is due whatever its
 * next_attempt_at, so a skew between the app clock and the database clock
 * never delays a new event. SKIP LOCKED lets any number of workers claim side
 * by side; the outer UPDATE re-checks the row, so two claims never both win.
 * Ordered by next_attempt_at (≈ arrival order for new events) so the partial
 * due index is read in order and a large backlog costs no sort per batch.
 * An event with an order key (a captured row's change) waits while an
 * earlier event with the same key is unfinished (pending, failed or being
 * processed): the handlers run inline (the shipped ones) see one row's
 * changes one at a time, in id order. Handing it to flow control (every
 * project handler keeps each row's order there, parking what keeps failing)
 * makes it `waiting`, which holds nothing. A dead event holds nothing either.
 */
const CLAIM_SQL = `
  UPDATE hookrun.webhook_events e
  SET status = 'processing', attempts = e.attempts + 1, locked_until = $2::timestamptz
  FROM (
    SELECT w.id FROM hookrun.webhook_events w
    WHERE (w.status = 'pending'
       OR (w.status = 'failed' AND w.next_attempt_at <= $1::timestamptz)
       OR (w.status = 'processing' AND w.locked_until <= $1::timestamptz))
      AND (w.order_key IS NULL OR NOT EXISTS (
        SELECT 1 FROM hookrun.webhook_events p
        WHERE p.order_key = w.order_key AND p.id < w.id AND p.status IN ('pending', 'failed', 'processing')))
    ORDER BY w.next_attempt_at
    LIMIT $3
    FOR UPDATE SKIP LOCKED
  ) due
  WHERE e.id = due.id
  RETURNING e.id, e.source, e.key, e.type, e.payload, e.attempts, e.received_at, e.locked_until, e.deliveries, e.order_key`;

/** Give a claim back untouched (shutdown before its handler ran): it does not count as an attempt. */
const RELEASE_SQL = `
  UPDATE hookrun.webhook_events e
  SET status = 'pending', attempts = e.attempts - 1, locked_until = NULL
  FROM unnest($1::bigint[], $2::int[]) AS u(id, attempts)
  WHERE e.id = u.id AND e.status = 'processing' AND e.attempts = u.attempts`;

/**
 * Renew the leases of claims still held. SKIP LOCKED: a row the worker's own
 * batch transaction is settling is skipped, never waited on (no deadlock
 * between the renewal and the settle).
 */
const EXTEND_SQL = `
  UPDATE hookrun.webhook_events e
  SET locked_until = $3::timestamptz
  FROM (
    SELECT w.id FROM hookrun.webhook_events w
    JOIN unnest($1::bigint[], $2::int[]) AS u(id, attempts) ON w.id = u.id AND w.attempts = u.attempts
    WHERE w.status || '' = 'processing' -- by primary key, not the partial due index (see SETTLE_SQL)
    ORDER BY w.id
    FOR UPDATE OF w SKIP LOCKED
  ) held
  WHERE e.id = held.id
  RETURNING e.id`;

const NEXT_DUE_SQL = `
  SELECT min(CASE WHEN status = 'failed' THEN next_attempt_at ELSE locked_until END) AS due
  FROM hookrun.webhook_events WHERE status IN ('failed', 'processing')`;

interface ClaimRow {
  id: number;
  source: string;
  key: string;
  type: string;
  payload: unknown;
  attempts: number;
  received_at: Date | string;
  locked_until: Date | string;
  deliveries: Deliveries | string | null;
  order_key: string | null;
}

/** Claim up to `limit` due events for `leaseMs`, marking them `processing` and counting the attempt. */
export async function claimDueEvents(db: Queryable, options: { now: number; leaseMs: number; limit: number }): Promise<ClaimedEvent[]> {
  const rows = await db.query<ClaimRow>(CLAIM_SQL, [new Date(options.now).toISOString(), new Date(options.now + options.leaseMs).toISOString(), options.limit]);
  return rows
    .map((row) => ({
      id: Number(row.id),
      source: row.source,
      key: row.key,
      type: row.type,
      payload: typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload,
      attempts: Number(row.attempts),
      receivedAt: new Date(row.received_at),
      lockedUntil: new Date(row.locked_until),
      deliveries: typeof row.deliveries === 'string' ? (JSON.parse(row.deliveries) as Deliveries) : row.deliveries,
      orderKey: row.order_key,
    }))
    .sort((a, b) => a.id - b.id);
}

/** Hand claims back as `pending` without counting an attempt (used on shutdown). */
export async function releaseClaims(db: Queryable, claims: Array<{ id: number; attempts: number }>): Promise<void> {
  if (claims.length === 0) return;
  await db.query(RELEASE_SQL, [claims.map((c) => c.id), claims.map((c) => c.attempts)]);
}

/** Push the leases of claims this worker still holds to `lockedUntil`; returns the ids renewed. */
export async function extendLeases(db: Queryable, claims: Array<{ id: number; attempts: number }>, lockedUntil: number): Promise<number[]> {
  if (claims.length === 0) return [];
  const rows = await db.query<{ id: number }>(EXTEND_SQL, [claims.map((c) => c.id), claims.map((c) => c.attempts), new Date(lockedUntil).toISOString()]);
  return rows.map((row) => Number(row.id));
}

/** When the next retry or lease expiry falls due (ms epoch), so an idle worker wakes exactly then. */
export async function nextDueAt(db: Queryable): Promise<number | undefined> {
  const [row] = await db.query<{ due: Date | string | null }>(NEXT_DUE_SQL);
  return row?.due ? new Date(row.due).getTime() : undefined;
}

/** Wake every LISTENing worker (on any instance) at commit, e.g. after a replay. */
export async function notifyEventsChannel(db: Queryable): Promise<void> {
  await db.query(`SELECT pg_notify('${EVENTS_CHANNEL}', '')`);
}
