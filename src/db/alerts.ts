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

/** The event that has waited longest since it fell due (pending, or failed past its retry time), or undefined. */
export async function oldestDueEvent(db: Queryable, now: number): Promise<{ id: number; dueAt: number; due: number } | undefined> {
  const [row] = await db.query<{ id: string | number; due_at: Date | string; due: string | number }>(
    `SELECT id, next_attempt_at AS due_at, count(*) OVER () AS due FROM (
       SELECT id, next_attempt_at FROM hookrun.webhook_events
       WHERE status = 'pending' OR (status = 'failed' AND next_attempt_at <= $1::timestamptz)
       ORDER BY next_attempt_at LIMIT 1000
     ) d ORDER BY next_attempt_at LIMIT 1`,
    [new Date(now)],
  );
  return row && { id: Number(row.id), dueAt: new Date(row.due_at).getTime(), due: Number(row.due) };
}
