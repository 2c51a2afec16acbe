import type { Database } from '../src/db/database.js';
import { parseFlowOptions } from '../src/flow/options.js';
import { HandlerRegistry } from '../src/deliveries/registry.js';

/** The source of every event the flow section stores. */
export const FLOW_SOURCE = 'flowbench';
/** Rate limited to 1 per hour per key, every key's next slot an hour away. */
export const RATE_BLOCKED = 'bench-rate-per-key';
/** 1 at a time per key, every key with one delivery running under a lease a day long. */
export const CONCURRENCY_BLOCKED = 'bench-concurrency-per-key';

/** Rows per fill statement. */
const FILL_CHUNK = 50_000;
const HOUR_MS = 3_600_000;

/**
 * Events (status `waiting`, a tiny payload `{"k": "k<n % keys>"}`) and one
 * delivery each for `handler`, numbered from..to; those below `running` are
 * `running` (lease a day away), the others `waiting`. The event key is the
 * handler's initial and the number, so the delivery finds its number back.
 */
const FILL_SQL = `
  WITH ev AS (
    INSERT INTO hookrun.webhook_events (source, key, type, payload, status, attempts, next_attempt_at, received_at)
    SELECT '${FLOW_SOURCE}', $2::text || n, $1, jsonb_build_object('k', 'k' || (n % $5)), 'waiting', 1, $6::timestamptz, $6::timestamptz
    FROM generate_series($3::int, $4::int) AS n
    RETURNING id, key, payload ->> 'k' AS k
  )
  INSERT INTO hookrun.handler_deliveries (handler, event_id, flow_key, status, attempts, run_after, rank, created_at, started_at, locked_until)
  SELECT $1, ev.id, ev.k, CASE WHEN x.running THEN 'running' ELSE 'waiting' END, CASE WHEN x.running THEN 1 ELSE 0 END,
         $6::timestamptz, $6::timestamptz + x.n * interval '1 microsecond', $6::timestamptz,
         CASE WHEN x.running THEN $6::timestamptz END, CASE WHEN x.running THEN $6::timestamptz + interval '1 day' END
  FROM ev, LATERAL (SELECT substr(ev.key, 2)::int AS n, substr(ev.key, 2)::int < $7 AS running) AS x`;

/** Each key of a handler as a claim would have left it: its running count, rate state and readiness, ranked by its first waiting delivery. */
const KEYS_SQL = `
  INSERT INTO hookrun.flow_keys (handler, flow_key, running, tat, ready_at, rank)
  SELECT handler, flow_key, count(*) FILTER (WHERE status = 'running'), $2::timestamptz, $3::timestamptz, min(rank) FILTER (WHERE status = 'waiting')
  FROM hookrun.handler_deliveries WHERE handler = $1 GROUP BY handler, flow_key`;

/** The two blocked handlers' plans (the key is the payload's `k`), for the worker's registry. */
export function blockedHandlers(registry: HandlerRegistry): HandlerRegistry {
  const key = (payload: { k: string }) => payload.k;
  const noop = async () => undefined;
  return registry
    .on(FLOW_SOURCE, RATE_BLOCKED, noop, { name: RATE_BLOCKED, isolated: true, flow: parseFlowOptions({ rateLimit: { limit: 1, period: '1h', key } }) })
    .on(FLOW_SOURCE, CONCURRENCY_BLOCKED, noop, {
      name: CONCURRENCY_BLOCKED,
      isolated: true,
      flow: parseFlowOptions({ concurrency: { limit: 1, key } }),
    });
}

async function fillHandler(db: Database, handler: string, prefix: string, count: number, keys: number, running: number, now: string): Promise<void> {
  for (let first = 0; first < count; first += FILL_CHUNK) {
    await db.query(FILL_SQL, [handler, prefix, first, Math.min(count, first + FILL_CHUNK) - 1, keys, now, running]);
  }
}

/**
 * A backlog no claim can start, written straight in SQL: `deliveries / 2`
 * waiting deliveries over `keys` keys for each blocked handler (plus, for
 * the concurrency one, one running delivery per key), their events
 * `waiting`, their keys and control rows as claims would have left them;
 * then VACUUM ANALYZE. Returns the ms it took.
 */
export async function fillBlockedBacklog(db: Database, size: { deliveries: number; keys: number }, progress: (line: string) => void): Promise<number> {
  const started = performance.now();
  const now = Date.now();
  const half = Math.floor(size.deliveries / 2);
  await fillHandler(db, RATE_BLOCKED, 'r', half, size.keys, 0, new Date(now).toISOString());
  progress(`flow: ${half.toLocaleString('en-US')} rate-limited deliveries stored (${((performance.now() - started) / 1000).toFixed(0)} s)`);
  await fillHandler(db, CONCURRENCY_BLOCKED, 'c', half + size.keys, size.keys, size.keys, new Date(now).toISOString());
  progress(
    `flow: ${(half + size.keys).toLocaleString('en-US')} concurrency-limited deliveries stored (${((performance.now() - started) / 1000).toFixed(0)} s)`,
  );
  const nextSlot = new Date(now + HOUR_MS).toISOString();
  await db.query(KEYS_SQL, [RATE_BLOCKED, nextSlot, nextSlot]);
  await db.query(KEYS_SQL, [CONCURRENCY_BLOCKED, null, null]);
  await db.query(`INSERT INTO hookrun.handler_controls (handler, running) VALUES ($1, 0), ($2, $3)`, [RATE_BLOCKED, CONCURRENCY_BLOCKED, size.keys]);
  for (const table of ['webhook_events', 'handler_deliveries', 'flow_keys', 'handler_controls']) await db.query(`VACUUM ANALYZE hookrun.${table}`);
  return performance.now() - started;
}

/** Deliveries of the blocked handlers started since the fill (0 unless a limit was broken): running ones beyond the one per key, or finished ones. */
export async function blockedStarts(db: Database, keys: number): Promise<number> {
  const [row] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM hookrun.handler_deliveries WHERE handler IN ($1, $2) AND status <> 'waiting'`, [
    RATE_BLOCKED,
    CONCURRENCY_BLOCKED,
  ]);
  return Number(row!.n) - keys;
}
