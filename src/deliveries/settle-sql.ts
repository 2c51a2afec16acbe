import type { Queryable } from '../db/database.js';
import { plannedOnce } from '../db/statement-names.js';
import type { DeliveryOutcome } from './claimed.js';
import { setSummary, summarizeEvents, summaryOf } from './event-summary.js';

/**
 * One statement settles the deliveries (the last attempt's start, duration
 * and outcome stay on the delivery), records each attempt that did not end
 * processed in `event_attempts` (a processed one is read off its delivery:
 * the common case writes no history row), and derives the status of each
 * event whose every delivery it settles (it holds them all: no one else can
 * change them meanwhile). The
 * `attempts` match is a fencing token: a worker whose lease ran out and whose
 * delivery was claimed again cannot overwrite the newer claim's outcome. A
 * failed delivery keeps its place among its key's relative to its priority
 * (its rank moves with its due time; ordered ones keep theirs). A `pending`
 * one (a step's sleep or wait) gives its attempt back: it is no failure, and
 * the next claim counts the same number again; a wait matched while it ran
 * is due at once.
 */
const SETTLE_SQL = plannedOnce(`
  WITH u AS (
    SELECT * FROM unnest($1::bigint[], $2::int[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::timestamptz[], $8::int[])
      AS u(id, attempts, status, error, stack, run_after, started_at, duration_ms)
  ), settled AS (
    UPDATE hookrun.handler_deliveries d
    SET status = u.status, last_error = u.error, locked_until = NULL,
        attempts = CASE WHEN u.status = 'pending' THEN d.attempts - 1 ELSE d.attempts END,
        run_after = CASE
          WHEN u.status = 'pending' AND EXISTS (SELECT 1 FROM hookrun.delivery_steps s
            WHERE s.delivery_id = d.id AND s.status = 'waiting' AND s.matched_event_id IS NOT NULL) THEN $9::timestamptz
          ELSE coalesce(u.run_after, d.run_after) END,
        rank = CASE WHEN u.run_after IS NOT NULL AND d.rank > 'epoch' THEN d.rank + (u.run_after - d.run_after) ELSE d.rank END,
        finished_at = CASE WHEN u.status IN ('failed', 'pending') THEN NULL ELSE $9::timestamptz END,
        duration_ms = u.duration_ms
    FROM u
    WHERE d.id = u.id AND d.status = 'running' AND d.attempts = u.attempts
    RETURNING d.id, d.event_id, d.handler, d.run, d.shared, u.attempts, u.status, u.error, u.stack, u.run_after, u.started_at, u.duration_ms
  ), history AS (
    INSERT INTO hookrun.event_attempts (event_id, attempt, run, handler, started_at, duration_ms, outcome, error, stack)
    SELECT event_id, attempts, run, handler, started_at, duration_ms, status, error, stack FROM settled WHERE status NOT IN ('processed', 'pending')
  ), alone AS (
    UPDATE hookrun.webhook_events e SET ${setSummary('s', '$9::timestamptz')}
    FROM (
      SELECT d.event_id, ${summaryOf('d')} FROM settled d GROUP BY d.event_id
      HAVING bool_and(NOT d.shared) OR count(*) = (SELECT count(*) FROM hookrun.handler_deliveries o WHERE o.event_id = d.event_id)
    ) s
    WHERE e.id = s.event_id
    RETURNING e.id
  )
  SELECT id, event_id, event_id IN (SELECT id FROM alone) AS summed FROM settled`);

/**
 * SETTLE_SQL for its commonest single outcome, one delivery processed (each
 * delivery committed on its own inside a function's time limit settles
 * alone): the same writes (no history row; the event summed at once when the
 * delivery is its only one, otherwise by summarizeEvents), in a statement
 * PostgreSQL plans in about a third of the time, which per delivery is most
 * of what the settle costs it.
 */
const SETTLE_ONE_PROCESSED_SQL = plannedOnce(`
  WITH settled AS (
    UPDATE hookrun.handler_deliveries d
    SET status = 'processed', last_error = NULL, locked_until = NULL, finished_at = $3::timestamptz, duration_ms = $4
    WHERE d.id = $1 AND d.status = 'running' AND d.attempts = $2
    RETURNING d.id, d.event_id, d.shared
  ), alone AS (
    UPDATE hookrun.webhook_events e SET ${setSummary('s', '$3::timestamptz')}
    FROM (
      SELECT event_id, 'processed' AS status, $2::int AS attempts, NULL::timestamptz AS next_attempt_at, NULL::text AS last_error
      FROM settled WHERE NOT shared
    ) s
    WHERE e.id = s.event_id
    RETURNING e.id
  )
  SELECT id, event_id, event_id IN (SELECT id FROM alone) AS summed FROM settled`);

/** The statement and parameters that settle `outcomes` at `now`. */
function settleStatement(outcomes: readonly DeliveryOutcome[], now: number): [string, unknown[]] {
  const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());
  const [one] = outcomes;
  if (outcomes.length === 1 && one!.status === 'processed' && one!.error === undefined) {
    return [SETTLE_ONE_PROCESSED_SQL, [one!.id, one!.attempts, new Date(now).toISOString(), Math.round(one!.durationMs)]];
  }
  return [
    SETTLE_SQL,
    [
      outcomes.map((o) => o.id),
      outcomes.map((o) => o.attempts),
      outcomes.map((o) => o.status),
      outcomes.map((o) => o.error ?? null),
      outcomes.map((o) => o.stack ?? null),
      outcomes.map((o) => iso(o.runAfter)),
      outcomes.map((o) => iso(o.startedAt)),
      outcomes.map((o) => Math.round(o.durationMs)),
      new Date(now).toISOString(),
    ],
  ];
}

/** What a settle wrote: the deliveries this worker still owned, and their events. */
export interface Settled {
  id: number;
  eventId: number;
}

/**
 * Write the outcomes of claimed deliveries, with their attempts and their
 * events' status, in the caller's transaction. An event with deliveries
 * settled elsewhere is summed up from all of them once its row is locked
 * (event-summary.ts). Returns the deliveries settled (a lost lease is not).
 */
export async function settleDeliveries(tx: Queryable, outcomes: readonly DeliveryOutcome[], now: number): Promise<Settled[]> {
  if (outcomes.length === 0) return [];
  const rows = await tx.query<{ id: number | string; event_id: number | string; summed: boolean }>(...settleStatement(outcomes, now));
  const settled = rows.map((r) => ({ id: Number(r.id), eventId: Number(r.event_id) }));
  await summarizeEvents(
    tx,
    rows.filter((r) => !r.summed).map((r) => Number(r.event_id)),
    now,
  );
  return settled;
}
