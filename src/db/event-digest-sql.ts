import { INSERT_WIDTH, REQUESTS_AND_ANSWER, valuesRow } from './event-insert-sql.js';

/**
 * The inbox insert for a batch where some events carry a body digest (senders
 * whose key and type are unsigned headers: GitHub, Shopify). Each digest is a
 * second unique key, `(<source>#body, <digest>)` in webhook_event_keys (no
 * route can contain `#`, so it meets no event key), claimed in the same
 * statement as the event: an event whose digest was already claimed, by an
 * earlier delivery or by a concurrent one, is not stored. Expired with the
 * other keys after DEDUPE_RETENTION_DAYS.
 */
export const BODY_DIGEST_SOURCE_SUFFIX = '#body';

const sqlBySlots = new Map<number, string>();

/** The statement for `slots` rows of the plain insert's columns (event-insert-sql.ts) plus $digest or NULL; NULL-source rows are padding. */
export function insertWithDigestSql(slots: number): string {
  let sql = sqlBySlots.get(slots);
  if (sql === undefined) {
    const values: string[] = new Array(slots);
    for (let i = 0, p = 1; i < slots; i++, p += INSERT_WIDTH + 1) values[i] = valuesRow(p, true);
    sql = `WITH v(s, k, t, p, h, b, r, q, d) AS (VALUES ${values.join(', ')}),
  digests AS (
    INSERT INTO hookrun.webhook_event_keys (source, key, received_at)
    SELECT v.s || '${BODY_DIGEST_SOURCE_SUFFIX}', v.d, now() FROM v
    WHERE v.s IS NOT NULL AND v.d IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM hookrun.webhook_events e WHERE e.source = v.s AND e.key = v.k)
      AND NOT EXISTS (SELECT 1 FROM hookrun.webhook_event_keys d WHERE d.source = v.s AND d.key = v.k)
    ON CONFLICT DO NOTHING
    RETURNING source, key
  ),
  stored AS (
    INSERT INTO hookrun.webhook_events (source, key, type, payload) SELECT v.s, v.k, v.t, v.p::json FROM v
    WHERE v.s IS NOT NULL
      AND (v.d IS NULL OR EXISTS (SELECT 1 FROM digests g WHERE g.source = v.s || '${BODY_DIGEST_SOURCE_SUFFIX}' AND g.key = v.d))
      AND NOT EXISTS (SELECT 1 FROM hookrun.webhook_event_keys d WHERE d.source = v.s AND d.key = v.k)
    ON CONFLICT (source, key) DO NOTHING
    RETURNING id, source, key
  )${REQUESTS_AND_ANSWER}`;
    sqlBySlots.set(slots, sql);
  }
  return sql;
}
