import type { Queryable } from './database.js';
import { addRunning, countByKey, lockControlRow, recomputeKeys, type KeyRule } from './flow-keys.js';

/** How one delivery's run ended: finished, or waiting again until `runAfter`. */
export interface DeliveryOutcome {
  id: number;
  eventId: number;
  flowKey: string;
  attempts: number;
  status: 'processed' | 'dead' | 'parked' | 'waiting';
  error?: string;
  runAfter?: number;
  startedAt: number;
  durationMs: number;
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Write the outcomes of one handler's deliveries (fenced by attempts: a
 * delivery whose lease was lost and claimed again is not overwritten), with
 * one `event_attempts` row each, and move its keys' counters on. Returns the
 * ids settled.
 */
export async function settleDeliveries(db: Queryable, rule: KeyRule, outcomes: DeliveryOutcome[], now: number): Promise<number[]> {
  if (outcomes.length === 0) return [];
  // Locks in the claim's order (the handler's control row, then deliveries, then keys): never a deadlock with a claim.
  await lockControlRow(db, rule.handler);
  const rows = await db.query<{ id: number; flow_key: string }>(
    `WITH settled AS (
       UPDATE hookrun.handler_deliveries d
       SET status = u.status, last_error = u.error, locked_until = NULL,
           run_after = coalesce(u.run_after, d.run_after),
           finished_at = CASE WHEN u.status = 'waiting' THEN NULL ELSE $8::timestamptz END
       FROM unnest($1::bigint[], $2::int[], $3::text[], $4::text[], $5::timestamptz[]) AS u(id, attempts, status, error, run_after)
       WHERE d.id = u.id AND d.status = 'running' AND d.attempts = u.attempts
       RETURNING d.id, d.flow_key, d.event_id, d.attempts, u.status, u.error
     ), history AS (
       INSERT INTO hookrun.event_attempts (event_id, attempt, handler, started_at, duration_ms, outcome, error)
       SELECT s.event_id, s.attempts, $9, t.started_at, t.duration_ms, CASE WHEN s.status = 'waiting' THEN 'failed' ELSE s.status END, s.error
       FROM settled s JOIN unnest($1::bigint[], $6::timestamptz[], $7::int[]) AS t(id, started_at, duration_ms) ON t.id = s.id
     )
     SELECT id, flow_key FROM settled`,
    [
      outcomes.map((o) => o.id),
      outcomes.map((o) => o.attempts),
      outcomes.map((o) => o.status),
      outcomes.map((o) => o.error ?? null),
      outcomes.map((o) => (o.runAfter === undefined ? null : iso(o.runAfter))),
      outcomes.map((o) => iso(o.startedAt)),
      outcomes.map((o) => Math.round(o.durationMs)),
      iso(now),
      rule.handler,
    ],
  );
  // A batch's members settle together: its key ran one run.
  const keys = rule.batch ? [...new Set(rows.map((r) => r.flow_key))] : rows.map((r) => r.flow_key);
  await addRunning(db, rule.handler, countByKey(keys, -1));
  await db.query(`UPDATE hookrun.handler_controls SET running = greatest(running - $2, 0) WHERE handler = $1`, [rule.handler, keys.length]);
  await recomputeKeys(db, rule, keys);
  return rows.map((r) => Number(r.id));
}

/**
 * Finish the `waiting` events among `ids` whose handed-over deliveries have
 * all ended: `dead` when one died or was parked (its error kept), else
 * `processed`. Run after the commit of whatever ended a delivery or set an
 * event waiting, so whichever of the two commits last sees both.
 */
export async function finishWaitingEvents(db: Queryable, ids: number[], now: number): Promise<number[]> {
  if (ids.length === 0) return [];
  const rows = await db.query<{ id: number }>(
    `UPDATE hookrun.webhook_events e
     SET status = CASE WHEN f.failed IS NULL THEN 'processed' ELSE 'dead' END,
         last_error = f.failed,
         processed_at = CASE WHEN f.failed IS NULL THEN $2::timestamptz ELSE e.processed_at END
     FROM (
       SELECT d.event_id,
              string_agg(CASE WHEN d.status IN ('dead', 'parked') THEN d.handler || ' ' || d.status || ': ' || coalesce(d.last_error, '') END, '; ') AS failed
       FROM hookrun.handler_deliveries d
       WHERE d.event_id = ANY($1::bigint[])
       GROUP BY d.event_id
       HAVING bool_and(d.status NOT IN ('waiting', 'running'))
     ) f
     WHERE e.id = f.event_id AND e.status = 'waiting'
     RETURNING e.id`,
    [ids, iso(now)],
  );
  return rows.map((r) => Number(r.id));
}
