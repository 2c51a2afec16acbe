import type { Queryable } from '../db/database.js';

const iso = (ms: number) => new Date(ms).toISOString();

/** Give claims back untouched (shutdown before their handler ran): they do not count as an attempt. */
export async function releaseClaims(db: Queryable, claims: ReadonlyArray<{ id: number; attempts: number }>): Promise<void> {
  if (claims.length === 0) return;
  await db.query(
    `UPDATE hookrun.handler_deliveries d SET status = 'pending', attempts = d.attempts - 1, locked_until = NULL
     FROM unnest($1::bigint[], $2::int[]) AS u(id, attempts)
     WHERE d.id = u.id AND d.status = 'running' AND d.attempts = u.attempts`,
    [claims.map((c) => c.id), claims.map((c) => c.attempts)],
  );
}

/**
 * Renew the leases of claims still held. SKIP LOCKED: a row the worker's own
 * transaction is settling is skipped, never waited on.
 */
export async function extendLeases(db: Queryable, claims: ReadonlyArray<{ id: number; attempts: number }>, lockedUntil: number): Promise<number[]> {
  if (claims.length === 0) return [];
  const rows = await db.query<{ id: number }>(
    `UPDATE hookrun.handler_deliveries d SET locked_until = $3::timestamptz
     FROM (
       SELECT w.id FROM hookrun.handler_deliveries w
       JOIN unnest($1::bigint[], $2::int[]) AS u(id, attempts) ON w.id = u.id AND w.attempts = u.attempts
       WHERE w.status = 'running' ORDER BY w.id FOR UPDATE OF w SKIP LOCKED
     ) held
     WHERE d.id = held.id RETURNING d.id`,
    [claims.map((c) => c.id), claims.map((c) => c.attempts), iso(lockedUntil)],
  );
  return rows.map((row) => Number(row.id));
}

/**
 * Expire every lease at once. Only for a process that alone holds the
 * database (an embedded data dir, under its lock): a delivery still `running`
 * there is a previous run's, cut short, and is taken over now instead of
 * after LEASE_SECONDS. The attempt it was counts.
 */
export async function expireLeftLeases(db: Queryable): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    `WITH expired AS (
       UPDATE hookrun.handler_deliveries SET locked_until = 'epoch' WHERE status = 'running' AND locked_until > 'epoch' RETURNING 1
     ) SELECT count(*)::int AS n FROM expired`,
  );
  return row?.n ?? 0;
}
