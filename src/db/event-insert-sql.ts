import { plannedOnce } from './statement-names.js';

/**
 * The inbox insert: one statement per batch that stores the events and,
 * beside each new one, its place in the queue of new events and the request
 * it came in (hookrun.event_requests), so a committed event always has both
 * and a duplicate keeps the first.
 * Each row of the VALUES list is ($source, $key, $type, $payload text,
 * $headers jsonb, $body text, $verification text, $search keys text[]); the
 * request columns are NULL for events without an HTTP request (reconcile,
 * the payments API), and $body is NULL when the body is the payload's own
 * text (sent and stored once: the payload column is json, which keeps it).
 */

/** Columns per row of the plain insert. */
export const INSERT_WIDTH = 8;

/** `v`'s row of parameters starting at `p` (…, `q` its search keys); `digest` adds a `$d` column (event-digest-sql.ts). */
export function valuesRow(p: number, digest: boolean): string {
  const row = `$${p}::text, $${p + 1}::text, $${p + 2}::text, $${p + 3}::text, $${p + 4}::jsonb, $${p + 5}::text, $${p + 6}::text, $${p + 7}::text[]`;
  return digest ? `(${row}, $${p + 8}::text)` : `(${row})`;
}

/**
 * After the `stored` CTE (RETURNING id, source, key): queue each new event
 * for a worker's claim (hookrun.new_events, which turns it into its
 * deliveries), write its search keys, keep its request (its body only when
 * it is not the payload itself), then answer its id and wake the workers.
 */
export const KEEP_REQUESTS = `,
  queued AS (
    INSERT INTO hookrun.new_events (event_id) SELECT id FROM stored
  ),
  searchable AS (
    INSERT INTO hookrun.event_search (value, event_id)
    SELECT q.value, stored.id FROM stored JOIN v ON v.s = stored.source AND v.k = stored.key CROSS JOIN unnest(v.q) AS q(value)
  ),
  requests AS (
    INSERT INTO hookrun.event_requests (event_id, headers, body, verification)
    SELECT stored.id, v.h, v.b, v.r FROM stored JOIN v ON v.s = stored.source AND v.k = stored.key
    WHERE v.r IS NOT NULL
  )`;

/** The answer: one notify per transaction at commit; none for duplicates. */
export const REQUESTS_AND_ANSWER = `${KEEP_REQUESTS}
  SELECT id, source, key, pg_notify('hookrun_events', '') FROM stored`;

const sqlBySlots = new Map<number, string>();

/**
 * One statement text per power-of-two size, built once: a multi-row VALUES with plain text parameters, so the
 * ~1.5 KB payloads travel as they are. A batch fills the smallest size that holds it and leaves the rest NULL
 * (skipped by `v.s IS NOT NULL`): few texts in all, so PostgreSQL can keep each one prepared (db/statement-names.ts).
 * A key retention has moved to webhook_event_keys (its event deleted) is a duplicate too, for DEDUPE_RETENTION_DAYS.
 */
export function insertSql(slots: number): string {
  let sql = sqlBySlots.get(slots);
  if (sql === undefined) {
    const values: string[] = new Array(slots);
    for (let i = 0, p = 1; i < slots; i++, p += INSERT_WIDTH) values[i] = valuesRow(p, false);
    sql = `WITH v(s, k, t, p, h, b, r, q) AS (VALUES ${values.join(', ')}),
  stored AS (
    INSERT INTO hookrun.webhook_events (source, key, type, payload) SELECT v.s, v.k, v.t, v.p::json FROM v
    WHERE v.s IS NOT NULL AND NOT EXISTS (SELECT 1 FROM hookrun.webhook_event_keys d WHERE d.source = v.s AND d.key = v.k)
    ON CONFLICT (source, key) DO NOTHING
    RETURNING id, source, key
  )${REQUESTS_AND_ANSWER}`;
    sql = plannedOnce(sql);
    sqlBySlots.set(slots, sql);
  }
  return sql;
}
