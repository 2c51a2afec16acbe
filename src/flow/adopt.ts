import type { Queryable } from '../db/database.js';

/**
 * A handler that has flow options now may have deliveries written before it
 * had them (no key): they wait under the key '' and its row is made, so the
 * claim finds them. Run once per handler when the flow claimer starts.
 */
export async function adoptDeliveries(db: Queryable, handler: string, now: number): Promise<void> {
  const adopted = await db.query<{ id: number }>(
    `UPDATE hookrun.handler_deliveries SET flow_key = '' WHERE handler = $1 AND flow_key IS NULL AND status IN ('pending', 'failed') RETURNING id`,
    [handler],
  );
  if (adopted.length === 0) return;
  const at = new Date(now).toISOString();
  await db.query(
    `INSERT INTO hookrun.flow_keys AS k (handler, flow_key, ready_at, rank) VALUES ($1, '', $2::timestamptz, $2::timestamptz)
     ON CONFLICT (handler, flow_key) DO UPDATE SET ready_at = least(k.ready_at, excluded.ready_at), idle_until = NULL`,
    [handler, at],
  );
}
