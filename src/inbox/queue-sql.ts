import type { Queryable } from '../db/database.js';
import { plannedOnce } from '../db/statement-names.js';
import { claimedDelivery, claimedEvent, type ClaimedDelivery, type ClaimedEvent, type ClaimedRow, type EventRow } from '../deliveries/claimed.js';
import type { NewDelivery } from './plan.js';

/** The NOTIFY channel a committed insert (event-writer.ts) or a replay signals; workers LISTEN on it. */
export const EVENTS_CHANNEL = 'hookrun_events';

const iso = (ms: number) => new Date(ms).toISOString();

/** `iso` of each time, each run of equal times formatted once: a claim's deliveries mostly share their due time and rank (about 1.5 µs a call saved per delivery). */
function isoEach<T>(items: readonly T[], time: (item: T) => number): string[] {
  let lastMs = Number.NaN;
  let lastText = '';
  return items.map((item) => {
    const ms = time(item);
    if (ms !== lastMs) {
      lastMs = ms;
      lastText = iso(ms);
    }
    return lastText;
  });
}

const EVENT_COLUMNS = 'e.id, e.source, e.key, e.type, e.payload, e.received_at, e.order_key';

/**
 * Take up to `$1` stored events that have no deliveries yet, oldest first;
 * SKIP LOCKED lets any number of workers take side by side. They leave
 * `new_events` in the transaction that writes their deliveries.
 * The taken ids are looked up as an array (`= ANY`), never joined: a plan
 * made once for any `$1` (a prepared statement's generic plan, which guesses
 * a tenth of the queue) would otherwise merge-join the whole event table on
 * every claim, slower with each event stored.
 */
const TAKE_NEW_SQL = `
  WITH taken AS (
    DELETE FROM hookrun.new_events n
    WHERE n.event_id = ANY (ARRAY(SELECT event_id FROM hookrun.new_events ORDER BY event_id LIMIT $1 FOR UPDATE SKIP LOCKED))
    RETURNING n.event_id
  )
  SELECT ${EVENT_COLUMNS} FROM hookrun.webhook_events e WHERE e.id = ANY (ARRAY(SELECT event_id FROM taken)) ORDER BY e.id`;

/** Take new events for planning (their attempts are their deliveries'; 0 here). */
export async function takeNewEvents(tx: Queryable, limit: number): Promise<ClaimedEvent[]> {
  const rows = await tx.query<EventRow>(TAKE_NEW_SQL, [limit]);
  return rows.map((row) => claimedEvent(row, 0));
}

/** A delivery claimed with its event is `running` from the start: attempt 1, leased. */
const INSERT_DELIVERIES_SQL = plannedOnce(`
  INSERT INTO hookrun.handler_deliveries
    (event_id, handler, flow_key, status, attempts, run_after, rank, last_error, shared, locked_until, started_at, finished_at, created_at)
  SELECT u.event_id, u.handler, u.flow_key, u.status, CASE WHEN u.status = 'running' THEN 1 ELSE 0 END, u.run_after, u.rank, u.error, u.shared,
         CASE WHEN u.status = 'running' THEN $10::timestamptz END, CASE WHEN u.status = 'running' THEN $9::timestamptz END,
         CASE WHEN u.status = 'dead' THEN $9::timestamptz END, $9::timestamptz
  FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::timestamptz[], $7::text[], $8::boolean[])
    AS u(event_id, handler, flow_key, status, run_after, rank, error, shared)
  ON CONFLICT (event_id, handler) DO NOTHING
  RETURNING id, event_id, handler, status`);

/** Write planned deliveries; returns those written (one already there, from before an upgrade, is kept) with their ids. */
export async function insertDeliveries(
  tx: Queryable,
  deliveries: readonly NewDelivery[],
  o: { now: number; leaseMs: number },
): Promise<Array<{ id: number; eventId: number; handler: string; status: string }>> {
  if (deliveries.length === 0) return [];
  const rows = await tx.query<{ id: number | string; event_id: number | string; handler: string; status: string }>(INSERT_DELIVERIES_SQL, [
    deliveries.map((d) => d.eventId),
    deliveries.map((d) => d.handler),
    deliveries.map((d) => d.flowKey),
    deliveries.map((d) => d.status),
    isoEach(deliveries, (d) => d.runAfter),
    isoEach(deliveries, (d) => d.rank),
    deliveries.map((d) => d.error),
    deliveries.map((d) => d.shared),
    iso(o.now),
    iso(o.now + o.leaseMs),
  ]);
  return rows.map((r) => ({ id: Number(r.id), eventId: Number(r.event_id), handler: r.handler, status: r.status }));
}

/** Events no handler takes: stored and acknowledged, `ignored`. */
export async function markIgnored(tx: Queryable, ids: readonly number[], now: number): Promise<void> {
  if (ids.length === 0) return;
  await tx.query(`UPDATE hookrun.webhook_events SET status = 'ignored', processed_at = $2::timestamptz WHERE id = ANY($1::bigint[])`, [ids, iso(now)]);
}

/**
 * Claim due deliveries of handlers that run inline (no flow options, not
 * paused): pending or failed and due, or running with an expired lease (its
 * worker died). One index probe per handler, so a paused handler's or a
 * flow-controlled handler's backlog is never read. A captured row's change
 * waits while an earlier change of the same row is unfinished for the same
 * handler (a parked or dead one holds nothing), and while any earlier event
 * is not yet turned into deliveries (another claim may be writing the row's
 * earlier change right now; its queue row stays visible until it commits).
 */
const CLAIM_DUE_SQL = `
  WITH due AS (
    SELECT w.id FROM unnest($1::text[]) AS h(name)
    CROSS JOIN LATERAL (
      SELECT d.id, d.run_after FROM hookrun.handler_deliveries d
      WHERE d.handler = h.name AND d.status IN ('pending', 'failed') AND d.run_after <= $2::timestamptz
        AND (d.flow_key IS NULL OR (
          d.event_id < coalesce((SELECT min(n.event_id) FROM hookrun.new_events n), 'Infinity'::numeric)
          AND NOT EXISTS (SELECT 1 FROM hookrun.handler_deliveries p
            WHERE p.handler = d.handler AND p.flow_key = d.flow_key AND p.rank = d.rank AND p.event_id < d.event_id AND p.status IN ('pending', 'failed'))
          AND NOT EXISTS (SELECT 1 FROM hookrun.handler_deliveries r WHERE r.handler = d.handler AND r.flow_key = d.flow_key AND r.status = 'running')))
      ORDER BY d.run_after LIMIT $4
      FOR UPDATE OF d SKIP LOCKED
    ) w
    UNION ALL
    SELECT l.id FROM unnest($1::text[]) AS h(name)
    CROSS JOIN LATERAL (
      SELECT d.id FROM hookrun.handler_deliveries d
      WHERE d.handler = h.name AND d.status = 'running' AND d.locked_until <= $2::timestamptz
      LIMIT $4
      FOR UPDATE OF d SKIP LOCKED
    ) l
    LIMIT $4
  ), claimed AS (
    UPDATE hookrun.handler_deliveries d
    SET status = 'running', attempts = d.attempts + 1, locked_until = $3::timestamptz, started_at = $2::timestamptz
    FROM due WHERE d.id = due.id
    RETURNING d.id, d.event_id, d.handler, d.attempts, d.flow_key, d.shared, d.debounced_ids
  )
  SELECT c.id AS delivery_id, c.handler, c.attempts, c.flow_key, c.shared, c.debounced_ids, ${EVENT_COLUMNS}
  FROM claimed c JOIN hookrun.webhook_events e ON e.id = c.event_id`;

/** Claim up to `limit` due deliveries of the inline handlers `handlers` for `leaseMs`. */
export async function claimDueDeliveries(
  tx: Queryable,
  handlers: readonly string[],
  o: { now: number; leaseMs: number; limit: number },
): Promise<ClaimedDelivery[]> {
  if (handlers.length === 0 || o.limit <= 0) return [];
  const rows = await tx.query<ClaimedRow>(CLAIM_DUE_SQL, [handlers, iso(o.now), iso(o.now + o.leaseMs), o.limit]);
  return rows.map((row) => claimedDelivery(row, o.now));
}

/** The claimed deliveries just written with their events (the plan's `running` ones), as the worker runs them. */
export async function readClaimed(tx: Queryable, ids: readonly number[], now: number): Promise<ClaimedDelivery[]> {
  if (ids.length === 0) return [];
  const rows = await tx.query<ClaimedRow>(
    `SELECT d.id AS delivery_id, d.handler, d.attempts, d.flow_key, d.shared, d.debounced_ids, ${EVENT_COLUMNS}
     FROM hookrun.handler_deliveries d JOIN hookrun.webhook_events e ON e.id = d.event_id WHERE d.id = ANY($1::bigint[])`,
    [ids],
  );
  return rows.map((row) => claimedDelivery(row, now));
}

/**
 * When the next retry, sleep's end or lease expiry of an inline handler falls
 * due (ms epoch), so an idle worker wakes exactly then. A pending delivery is either
 * claimed at once or waits behind an earlier change of its row, whose retry
 * is in the set.
 */
export async function nextDueAt(db: Queryable, handlers: readonly string[]): Promise<number | undefined> {
  if (handlers.length === 0) return undefined;
  const [row] = await db.query<{ due: Date | string | null }>(
    `SELECT least(
       (SELECT min(w.due) FROM unnest($1::text[]) AS h(name)
          CROSS JOIN LATERAL (SELECT d.run_after AS due FROM hookrun.handler_deliveries d
            WHERE d.handler = h.name AND d.status = 'failed' ORDER BY d.run_after LIMIT 1) w),
       (SELECT min(w.due) FROM unnest($1::text[]) AS h(name)
          CROSS JOIN LATERAL (SELECT d.run_after AS due FROM hookrun.handler_deliveries d
            WHERE d.handler = h.name AND d.status = 'pending' AND d.flow_key IS NULL ORDER BY d.run_after LIMIT 1) w),
       (SELECT min(l.due) FROM unnest($1::text[]) AS h(name)
          CROSS JOIN LATERAL (SELECT min(d.locked_until) AS due FROM hookrun.handler_deliveries d WHERE d.handler = h.name AND d.status = 'running') l)
     ) AS due`,
    [handlers],
  );
  return row?.due ? new Date(row.due).getTime() : undefined;
}

/** Wake every LISTENing worker (on any instance) at commit, e.g. after a replay. */
export async function notifyEventsChannel(db: Queryable): Promise<void> {
  await db.query(`SELECT pg_notify('${EVENTS_CHANNEL}', '')`);
}
