import { INSERT_WIDTH, KEEP_REQUESTS, valuesRow } from './event-insert-sql.js';
import { plannedOnce } from './statement-names.js';

/**
 * The inbox insert for a batch where some events carry a body digest (senders
 * whose key and type are unsigned headers: GitHub, Shopify). The digest never
 * makes a delivery a duplicate: only its key does (two genuine events can
 * have the same body: `orders/create` and `orders/paid`, block, unblock,
 * block). It marks a suspected replay: `(<source>#body, <digest>)` in
 * webhook_event_keys (no route can contain `#`, so it meets no event key)
 * remembers the first event stored with that body, and a later event of the
 * source with the same body is stored with that event's id in
 * `same_body_as`. Expired with the other keys after DEDUPE_RETENTION_DAYS; a
 * row from before event ids were kept takes the next event's.
 */
export const BODY_DIGEST_SOURCE_SUFFIX = '#body';

const sqlBySlots = new Map<number, string>();

/**
 * The statement for `slots` rows of the plain insert's columns (event-insert-sql.ts) plus $digest or NULL; NULL-source rows
 * are padding. No two rows may share a source and digest (digestRounds): one statement claims a digest row once.
 * It answers, beside each new event's id, `same_body_as` and whether its digest row is its own (`claimed`).
 */
export function insertWithDigestSql(slots: number): string {
  let sql = sqlBySlots.get(slots);
  if (sql === undefined) {
    const values: string[] = new Array(slots);
    for (let i = 0, p = 1; i < slots; i++, p += INSERT_WIDTH + 1) values[i] = valuesRow(p, true);
    sql = `WITH v(s, k, t, p, h, b, r, q, d) AS (VALUES ${values.join(', ')}),
  stored AS (
    INSERT INTO hookrun.webhook_events (source, key, type, payload, same_body_as)
    SELECT v.s, v.k, v.t, v.p::json,
      (SELECT g.event_id FROM hookrun.webhook_event_keys g WHERE v.d IS NOT NULL AND g.source = v.s || '${BODY_DIGEST_SOURCE_SUFFIX}' AND g.key = v.d)
    FROM v
    WHERE v.s IS NOT NULL AND NOT EXISTS (SELECT 1 FROM hookrun.webhook_event_keys d WHERE d.source = v.s AND d.key = v.k)
    ON CONFLICT (source, key) DO NOTHING
    RETURNING id, source, key, same_body_as
  ),
  digests AS (
    INSERT INTO hookrun.webhook_event_keys (source, key, received_at, event_id)
    SELECT v.s || '${BODY_DIGEST_SOURCE_SUFFIX}', v.d, now(), stored.id FROM stored JOIN v ON v.s = stored.source AND v.k = stored.key
    WHERE v.d IS NOT NULL
    ON CONFLICT (source, key) DO UPDATE SET event_id = excluded.event_id WHERE webhook_event_keys.event_id IS NULL
    RETURNING event_id
  )${KEEP_REQUESTS}
  SELECT id, source, key, same_body_as, id IN (SELECT event_id FROM digests) AS claimed, pg_notify('hookrun_events', '') FROM stored`;
    sql = plannedOnce(sql);
    sqlBySlots.set(slots, sql);
  }
  return sql;
}

/**
 * For events whose digest row another writer claimed while their statement
 * ran (so `same_body_as` could not see it): the claimed row's event, now
 * committed (the insert waited for it).
 */
export const SAME_BODY_LATE_SQL = `
  UPDATE hookrun.webhook_events e SET same_body_as = g.event_id
  FROM unnest($1::bigint[], $2::text[]) AS u(id, d), hookrun.webhook_event_keys g
  WHERE e.id = u.id AND g.source = e.source || '${BODY_DIGEST_SOURCE_SUFFIX}' AND g.key = u.d AND g.event_id <> e.id
  RETURNING e.id, e.same_body_as`;

/**
 * `items` in statements to run one after the other, so none holds two with one
 * source and digest: the second of a body waits for the first's row and is
 * marked with its id. Without repeated bodies, one statement.
 */
export function digestRounds<T>(items: T[], digestOf: (item: T) => string | undefined): T[][] {
  const rounds: T[][] = [[]];
  const seen = new Map<string, number>();
  for (const item of items) {
    const digest = digestOf(item);
    const round = digest === undefined ? 0 : (seen.get(digest) ?? 0);
    if (digest !== undefined) seen.set(digest, round + 1);
    (rounds[round] ??= []).push(item);
  }
  return rounds;
}
