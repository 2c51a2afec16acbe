import type { Queryable } from './database.js';

/** How a handler's keys become ready: its per-key concurrency (null: none) and whether its keys run in event order. */
export interface KeyRule {
  handler: string;
  /** Deliveries of one key that may run at once; null when only global limits apply. */
  keyLimit: number | null;
  ordered: boolean;
  /** Batches: a key is ready once `maxSize` wait or its oldest has waited `maxWaitMs`; a batch counts as one run. */
  batch?: { maxSize: number; maxWaitMs: number };
}

/**
 * Recompute `rank` and `ready_at` of some keys of a handler from their
 * waiting deliveries (two index probes per key): ready when something waits,
 * the key is under its limit, and at the later of the head's run_after and
 * the key's rate slot (`tat`) and, for batches, once the batch is full or
 * its oldest has waited maxWait. An ordered key's head is its oldest event,
 * due or not (nothing overtakes it); otherwise the soonest due delivery
 * makes the key ready and the best-ranked due one runs first.
 */
const RECOMPUTE_SQL = `
  UPDATE hookrun.flow_keys k
  SET rank = h.rank,
      ready_at = CASE
        WHEN h.run_after IS NULL THEN NULL
        WHEN $3::int IS NOT NULL AND k.running >= $3::int THEN NULL
        ELSE greatest(h.run_after, k.tat, CASE
          WHEN $5::int IS NULL THEN NULL
          WHEN (SELECT count(*) FROM (SELECT 1 FROM hookrun.handler_deliveries c
                WHERE c.handler = $1 AND c.flow_key = u.flow_key AND c.status = 'waiting' LIMIT $5::int) f) >= $5::int THEN NULL
          ELSE h.created_at + $6::interval END) END
  FROM unnest($2::text[]) AS u(flow_key)
  LEFT JOIN LATERAL (
    SELECT n.rank, n.created_at, CASE WHEN $4::boolean THEN n.run_after ELSE (
      SELECT r.run_after FROM hookrun.handler_deliveries r
      WHERE r.handler = $1 AND r.flow_key = u.flow_key AND r.status = 'waiting' ORDER BY r.run_after LIMIT 1) END AS run_after
    FROM hookrun.handler_deliveries n
    WHERE n.handler = $1 AND n.flow_key = u.flow_key AND n.status = 'waiting'
    ORDER BY n.rank, n.event_id LIMIT 1
  ) h ON true
  WHERE k.handler = $1 AND k.flow_key = u.flow_key`;

/** Bring these keys' readiness up to date after deliveries were handed over, claimed or settled. */
export async function recomputeKeys(db: Queryable, rule: KeyRule, keys: Iterable<string>): Promise<void> {
  const list = [...new Set(keys)];
  if (list.length === 0) return;
  const batch = rule.batch;
  await db.query(RECOMPUTE_SQL, [rule.handler, list, rule.keyLimit, rule.ordered, batch?.maxSize ?? null, batch ? `${batch.maxWaitMs} milliseconds` : null]);
}

/**
 * Recompute the keys that can start nothing although they may have work:
 * ready_at null and under their limit. Repairs a key whose hand-over
 * committed but whose recompute never ran (the instance died in between).
 */
export async function repairKeys(db: Queryable, rule: KeyRule): Promise<void> {
  const rows = await db.query<{ flow_key: string }>(
    `SELECT flow_key FROM hookrun.flow_keys WHERE handler = $1 AND ready_at IS NULL AND ($2::int IS NULL OR running < $2::int)`,
    [rule.handler, rule.keyLimit],
  );
  await recomputeKeys(
    db,
    rule,
    rows.map((r) => r.flow_key),
  );
}

/** Change how many deliveries of each key run (positive: claimed; negative: finished or lost). */
export async function addRunning(db: Queryable, handler: string, counts: Map<string, number>): Promise<void> {
  if (counts.size === 0) return;
  await db.query(
    `UPDATE hookrun.flow_keys k SET running = greatest(k.running + u.n, 0)
     FROM unnest($2::text[], $3::int[]) AS u(flow_key, n) WHERE k.handler = $1 AND k.flow_key = u.flow_key`,
    [handler, [...counts.keys()], [...counts.values()]],
  );
}

/** Count per key, for addRunning. */
export function countByKey(keys: Iterable<string>, sign = 1): Map<string, number> {
  const counts = new Map<string, number>();
  for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + sign);
  return counts;
}

/** A handler's control row, as a claim holds it. */
export interface ControlRow {
  paused: boolean;
  running: number;
  tat: Date | string | null;
}

/**
 * Lock the handler's control row (made if it has none) for this transaction:
 * claims, debounce hand-overs and settles of one handler take turns on it
 * across instances, and it is always the first lock they take.
 */
export async function lockControlRow(tx: Queryable, handler: string): Promise<ControlRow> {
  await tx.query(`INSERT INTO hookrun.handler_controls (handler) VALUES ($1) ON CONFLICT DO NOTHING`, [handler]);
  const [row] = await tx.query<ControlRow>(`SELECT paused, running, tat FROM hookrun.handler_controls WHERE handler = $1 FOR UPDATE`, [handler]);
  return row!;
}
