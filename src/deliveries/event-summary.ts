import type { Queryable } from '../db/database.js';

/** The longest `last_error` kept on an event or a delivery: enough for a message, bounded for the row. */
export const MAX_ERROR_CHARS = 2000;

/**
 * An event's summary from its deliveries, as SQL aggregates over `d` (rows
 * with `status`, `attempts`, `run_after`, `error` and `handler`, grouped by
 * event): the one definition of an event's status. Any delivery failed (will
 * retry) → `failed`; else any pending or running → `pending`; else any dead or
 * parked → `dead`; else `processed` (debounced counts as done). Its error:
 * its one delivery's, or each failed, dead or parked delivery's as
 * "<handler> <status>: <error>". An event no
 * handler takes has no deliveries and is `ignored` (inbox/plan.ts).
 */
export function summaryOf(d: string): string {
  const bad = `${d}.status IN ('failed', 'dead', 'parked')`;
  return `CASE
      WHEN bool_or(${d}.status = 'failed') THEN 'failed'
      WHEN bool_or(${d}.status IN ('pending', 'running')) THEN 'pending'
      WHEN bool_or(${d}.status IN ('dead', 'parked')) THEN 'dead'
      ELSE 'processed' END AS status,
    max(${d}.attempts) AS attempts,
    min(${d}.run_after) FILTER (WHERE ${d}.status = 'failed') AS next_attempt_at,
    left(CASE WHEN count(*) = 1 THEN max(${d}.error) FILTER (WHERE ${bad})
      ELSE string_agg(${d}.handler || ' ' || ${d}.status || ': ' || coalesce(${d}.error, ''), '; ' ORDER BY ${d}.handler) FILTER (WHERE ${bad}) END, ${MAX_ERROR_CHARS}) AS last_error`;
}

/** The SET of an event row from its summary `s` (`now` the parameter holding the settle's time). */
export function setSummary(s: string, now: string): string {
  return `status = ${s}.status, attempts = ${s}.attempts, last_error = ${s}.last_error,
    next_attempt_at = coalesce(${s}.next_attempt_at, e.next_attempt_at),
    processed_at = CASE WHEN ${s}.status = 'processed' THEN ${now} END`;
}

/**
 * Bring these events' status up to date from all their deliveries. Their
 * rows are locked first, in id order (one lock order: two settles of one
 * event's deliveries take turns, and the later one reads both outcomes in
 * its next statement). Call it in the transaction that changed the deliveries.
 */
export async function summarizeEvents(tx: Queryable, eventIds: Iterable<number>, now: number): Promise<void> {
  const ids = [...new Set(eventIds)].sort((a, b) => a - b);
  if (ids.length === 0) return;
  await tx.query(`SELECT id FROM hookrun.webhook_events WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE`, [ids]);
  await tx.query(
    `UPDATE hookrun.webhook_events e SET ${setSummary('s', '$2::timestamptz')}
     FROM (
       SELECT d.event_id, ${summaryOf('d')}
       FROM (SELECT event_id, status, attempts, run_after, last_error AS error, handler FROM hookrun.handler_deliveries WHERE event_id = ANY($1::bigint[])) d
       GROUP BY d.event_id
     ) s
     WHERE e.id = s.event_id`,
    [ids, new Date(now).toISOString()],
  );
}
