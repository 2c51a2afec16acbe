import type { Database } from '../src/db/database.js';
import { lockControlRow, setKeyTats } from '../src/flow/claim-sql.js';
import { lockKeys, refreshKeys } from '../src/flow/key-state.js';
import { parseFlowOptions, type FlowPlan } from '../src/flow/options.js';
import { claimRuleOf } from '../src/flow/rule.js';
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

const key = (payload: { k: string }) => payload.k;
const RATE_PLAN = parseFlowOptions({ rateLimit: { limit: 1, period: '1h', key } })!;
const CONCURRENCY_PLAN = parseFlowOptions({ concurrency: { limit: 1, key } })!;

/**
 * Events (a tiny payload `{"k": "k<n % keys>"}`, already turned into their
 * deliveries: no new_events row) and one delivery each for `handler`,
 * numbered from..to; those below `running` are `running` (attempt 1, lease a
 * day away), the others `pending`, as a claim leaves them. Each event's status
 * is its delivery's (`pending` either way). The event key is the handler's
 * initial and the number, so the delivery finds its number back.
 */
const FILL_SQL = `
  WITH ev AS (
    INSERT INTO hookrun.webhook_events (source, key, type, payload, status, attempts, next_attempt_at, received_at)
    SELECT '${FLOW_SOURCE}', $2::text || n, $1, json_build_object('k', 'k' || (n % $5)), 'pending', CASE WHEN n < $7 THEN 1 ELSE 0 END,
           $6::timestamptz, $6::timestamptz
    FROM generate_series($3::int, $4::int) AS n
    RETURNING id, key, payload ->> 'k' AS k
  )
  INSERT INTO hookrun.handler_deliveries (handler, event_id, flow_key, status, attempts, run_after, rank, created_at, started_at, locked_until)
  SELECT $1, ev.id, ev.k, CASE WHEN x.running THEN 'running' ELSE 'pending' END, CASE WHEN x.running THEN 1 ELSE 0 END,
         $6::timestamptz, $6::timestamptz + x.n * interval '1 microsecond', $6::timestamptz,
         CASE WHEN x.running THEN $6::timestamptz END, CASE WHEN x.running THEN $6::timestamptz + interval '1 day' END
  FROM ev, LATERAL (SELECT substr(ev.key, 2)::int AS n, substr(ev.key, 2)::int < $7 AS running) AS x`;

/** The two blocked handlers' plans (the key is the payload's `k`), for the worker's registry. */
export function blockedHandlers(registry: HandlerRegistry): HandlerRegistry {
  const noop = async () => undefined;
  return registry
    .on(FLOW_SOURCE, RATE_BLOCKED, noop, { name: RATE_BLOCKED, isolated: true, flow: RATE_PLAN })
    .on(FLOW_SOURCE, CONCURRENCY_BLOCKED, noop, { name: CONCURRENCY_BLOCKED, isolated: true, flow: CONCURRENCY_PLAN });
}

async function fillHandler(db: Database, handler: string, prefix: string, count: number, keys: number, running: number, now: string): Promise<void> {
  for (let first = 0; first < count; first += FILL_CHUNK) {
    await db.query(FILL_SQL, [handler, prefix, first, Math.min(count, first + FILL_CHUNK) - 1, keys, now, running]);
  }
}

/**
 * The handler's key rows and control row as its claims would have left them,
 * written by the claim's own functions: every key's row made (lockKeys), its
 * rate state set (`tat`, rate-limited keys only), then its readiness and place
 * in line read from its deliveries (refreshKeys: a rate-limited key is ready
 * at its next slot, a key at its concurrency limit not before a run ends).
 */
async function keyRows(db: Database, handler: string, plan: FlowPlan, keys: number, now: number, tat?: number): Promise<void> {
  const names = Array.from({ length: keys }, (_, n) => `k${n}`);
  const rule = claimRuleOf(handler, plan);
  await db.transaction(async (tx) => {
    await lockControlRow(tx, handler);
    await lockKeys(tx, handler, names, now);
    if (tat !== undefined) await setKeyTats(tx, handler, new Map(names.map((n) => [n, tat])));
    await refreshKeys(tx, rule, names, now);
  });
}

/**
 * A backlog no claim can start, written straight in SQL: `deliveries / 2`
 * pending deliveries over `keys` keys for each blocked handler (plus, for
 * the concurrency one, one running delivery per key), their events
 * `pending`; their key rows (flow_keys) and control rows (handler_controls)
 * as claims would have left them; then VACUUM ANALYZE. Returns the ms it took.
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
  await keyRows(db, RATE_BLOCKED, RATE_PLAN, size.keys, now, now + HOUR_MS);
  await keyRows(db, CONCURRENCY_BLOCKED, CONCURRENCY_PLAN, size.keys, now);
  for (const table of ['webhook_events', 'handler_deliveries', 'flow_keys', 'handler_controls']) await db.query(`VACUUM ANALYZE hookrun.${table}`);
  return performance.now() - started;
}

/** Deliveries of the blocked handlers started since the fill (0 unless a limit was broken): running ones beyond the one per key, or finished ones. */
export async function blockedStarts(db: Database, keys: number): Promise<number> {
  const [row] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM hookrun.handler_deliveries WHERE handler IN ($1, $2) AND status <> 'pending'`, [
    RATE_BLOCKED,
    CONCURRENCY_BLOCKED,
  ]);
  return Number(row!.n) - keys;
}
