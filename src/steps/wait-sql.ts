import type { Queryable } from '../db/database.js';

/** Between a wait key's parts (event name, path, value): a character no name or path holds. */
export const WAIT_KEY_SEPARATOR = '\u001f';

/** The one key a wait and an arriving event meet on: `<route>:<type>`, the dotted path, the value there. */
export const waitKeyOf = (eventName: string, path: string, value: string) => [eventName, path, value].join(WAIT_KEY_SEPARATOR);

const iso = (ms: number) => new Date(ms).toISOString();

/** Remember that waits match `eventName` on `path`, so arriving events of that name are looked up by it. */
export async function rememberWaitPath(db: Queryable, eventName: string, path: string): Promise<void> {
  await db.query(`INSERT INTO hookrun.wait_paths (event_name, path) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [eventName, path]);
}

/**
 * The first event named `eventName` (`<route>:<type>`) received since
 * `since` whose payload has `value` at `path`, other than `exceptId`: what
 * a wait that begins now takes, when it arrived before the wait did.
 */
export async function findEarlierEvent(
  db: Queryable,
  o: { route: string; type: string; path: string; value: string; since: number; exceptId: number },
): Promise<{ id: number; payload: unknown } | undefined> {
  const [row] = await db.query<{ id: number | string; payload: unknown }>(
    `SELECT id, payload FROM hookrun.webhook_events
     WHERE source = $1 AND type = $2 AND received_at >= $3::timestamptz AND id <> $4
       AND payload #>> string_to_array($5, '.') = $6
     ORDER BY id LIMIT 1`,
    [o.route, o.type, iso(o.since), o.exceptId, o.path, o.value],
  );
  return row ? { id: Number(row.id), payload: typeof row.payload === 'string' ? (JSON.parse(row.payload) as unknown) : row.payload } : undefined;
}

/** A stored event's payload (a wait's match), or undefined when retention removed it. */
export async function readEventPayload(db: Queryable, id: number): Promise<unknown> {
  const [row] = await db.query<{ payload: unknown }>(`SELECT payload FROM hookrun.webhook_events WHERE id = $1`, [id]);
  return row === undefined ? undefined : typeof row.payload === 'string' ? (JSON.parse(row.payload) as unknown) : row.payload;
}

/** A delivery a new event woke: its handler, key and place in line (its flow key's row is brought forward with it). */
export interface WokenDelivery {
  handler: string;
  flowKey: string | null;
  rank: number;
}

/**
 * Match new events against the waits on them, in the claim that plans them:
 * for each (name, path) some wait uses (`wait_paths`), one index probe on
 * `delivery_steps.wait_key`; a match is recorded on the wait and its delivery,
 * if asleep, is due now. A delivery still running its attempt reads the
 * match when it settles (settle-sql.ts), so a wake is never lost.
 */
export async function wakeWaits(tx: Queryable, eventIds: readonly number[], now: number): Promise<WokenDelivery[]> {
  if (eventIds.length === 0) return [];
  const rows = await tx.query<{ handler: string; flow_key: string | null; rank: Date | string }>(
    `WITH e AS (
       SELECT ev.id, ev.source || ':' || ev.type AS name, ev.payload FROM hookrun.webhook_events ev WHERE ev.id = ANY($1::bigint[])
     ), hit AS (
       SELECT s.delivery_id, s.step_id, min(e.id) AS event_id
       FROM e JOIN hookrun.wait_paths p ON p.event_name = e.name
       JOIN hookrun.delivery_steps s
         ON s.wait_key = e.name || chr(31) || p.path || chr(31) || (e.payload #>> string_to_array(p.path, '.'))
        AND s.status = 'waiting' AND s.matched_event_id IS NULL
       GROUP BY s.delivery_id, s.step_id
     ), marked AS (
       UPDATE hookrun.delivery_steps s SET matched_event_id = hit.event_id FROM hit
       WHERE s.delivery_id = hit.delivery_id AND s.step_id = hit.step_id
       RETURNING s.delivery_id
     )
     UPDATE hookrun.handler_deliveries d SET run_after = $2::timestamptz
     FROM marked WHERE d.id = marked.delivery_id AND d.status = 'pending' AND d.run_after > $2::timestamptz
     RETURNING d.handler, d.flow_key, d.rank`,
    [eventIds, iso(now)],
  );
  return rows.map((r) => ({ handler: r.handler, flowKey: r.flow_key, rank: new Date(r.rank).getTime() }));
}
