import type { Queryable } from './database.js';

/** How long a claimed alert key is remembered: longer than any condition is re-checked for. */
const CLAIM_TTL_MS = 7 * 86_400_000;

/**
 * Claim the right to send the alert `key` (a late tick, a stuck queue): true
 * for exactly one caller across every instance. Old claims are forgotten
 * after a week, in the same statement's transaction.
 */
export async function claimAlert(db: Queryable, key: string, now: number): Promise<boolean> {
  await db.query('DELETE FROM hookrun.alert_claims WHERE claimed_at < $1::timestamptz', [new Date(now - CLAIM_TTL_MS)]);
  const rows = await db.query('INSERT INTO hookrun.alert_claims (key, claimed_at) VALUES ($1, $2::timestamptz) ON CONFLICT (key) DO NOTHING RETURNING key', [
    key,
    new Date(now),
  ]);
  return rows.length === 1;
}

/**
 * The event that has waited longest since it fell due, or undefined: an
 * event not yet turned into deliveries, or a delivery of a handler without
 * flow options that is pending or failed past its retry time and not paused.
 * Deliveries held by their flow control (a rate, a debounce) or a pause wait
 * by design: they are no backlog.
 */
export async function oldestDueEvent(db: Queryable, now: number): Promise<{ id: number; dueAt: number; due: number } | undefined> {
  const [row] = await db.query<{ id: string | number; due_at: Date | string; due: string | number }>(
    `SELECT id, due_at, count(*) OVER () AS due FROM (
       (SELECT n.event_id AS id, e.received_at AS due_at FROM hookrun.new_events n JOIN hookrun.webhook_events e ON e.id = n.event_id
        ORDER BY n.event_id LIMIT 1000)
       UNION ALL
       (SELECT d.event_id, d.run_after FROM hookrun.handler_deliveries d
        WHERE d.flow_key IS NULL AND d.status IN ('pending', 'failed') AND d.run_after <= $1::timestamptz
          AND NOT EXISTS (SELECT 1 FROM hookrun.handler_controls c WHERE c.handler = d.handler AND c.paused)
        ORDER BY d.run_after LIMIT 1000)
     ) d ORDER BY due_at LIMIT 1`,
    [new Date(now)],
  );
  return row && { id: Number(row.id), dueAt: new Date(row.due_at).getTime(), due: Number(row.due) };
}
