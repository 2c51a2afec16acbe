import type { Queryable } from '../db/database.js';
import type { ClaimedRow } from '../deliveries/claimed.js';

const iso = (ms: number) => new Date(ms).toISOString();
const ms = (value: Date | string | null | undefined) => (value === null || value === undefined ? undefined : new Date(value).getTime());

/** A handler's control row, as a claim holds it. */
export interface ControlRow {
  paused: boolean;
  tat: number | undefined;
}

/**
 * Lock the handler's control row (made if it has none) for this transaction:
 * claims of one handler take turns on it across instances, and it is the
 * first lock a claim takes.
 */
export async function lockControlRow(tx: Queryable, handler: string): Promise<ControlRow> {
  await tx.query(`INSERT INTO hookrun.handler_controls (handler) VALUES ($1) ON CONFLICT DO NOTHING`, [handler]);
  const [row] = await tx.query<{ paused: boolean; tat: Date | string | null }>(
    `SELECT paused, tat FROM hookrun.handler_controls WHERE handler = $1 FOR UPDATE`,
    [handler],
  );
  return { paused: row!.paused === true, tat: ms(row!.tat) };
}

/** The handler's running deliveries whose lease ran out (their instance died), taken without waiting for any row. */
export async function takeLost(tx: Queryable, handler: string, now: number): Promise<Array<{ id: number; flowKey: string }>> {
  const rows = await tx.query<{ id: number | string; flow_key: string }>(
    `SELECT id, flow_key FROM hookrun.handler_deliveries WHERE handler = $1 AND status = 'running' AND locked_until <= $2::timestamptz FOR UPDATE SKIP LOCKED`,
    [handler, iso(now)],
  );
  return rows.map((r) => ({ id: Number(r.id), flowKey: r.flow_key }));
}

/** Lost deliveries wait again, due now; their claim stays counted as an attempt. */
export async function requeueLost(tx: Queryable, ids: readonly number[], now: number): Promise<void> {
  if (ids.length === 0) return;
  await tx.query(`UPDATE hookrun.handler_deliveries SET status = 'pending', locked_until = NULL, run_after = $2::timestamptz WHERE id = ANY($1::bigint[])`, [
    ids,
    iso(now),
  ]);
}

/** Runs of the handler going on, all keys (a batch counts once), besides `except`. */
export async function countRunning(tx: Queryable, handler: string, batch: boolean, except: readonly number[]): Promise<number> {
  const [row] = await tx.query<{ n: number | string }>(
    `SELECT ${batch ? 'count(DISTINCT (flow_key, started_at))' : 'count(*)'} AS n FROM hookrun.handler_deliveries
     WHERE handler = $1 AND status = 'running' AND NOT (id = ANY($2::bigint[]))`,
    [handler, except],
  );
  return Number(row?.n ?? 0);
}

/** Keys whose row says they may be ready by `until`, best placed first (a lower bound: the claim checks each). */
export async function readyKeys(tx: Queryable, handler: string, until: number, limit: number): Promise<string[]> {
  const rows = await tx.query<{ flow_key: string }>(
    `SELECT flow_key FROM hookrun.flow_keys WHERE handler = $1 AND ready_at <= $2::timestamptz ORDER BY rank, flow_key LIMIT $3`,
    [handler, iso(until), limit],
  );
  return rows.map((r) => r.flow_key);
}

/** Up to `n` due waiting deliveries of each key, best placed first, without waiting for a row another claim holds. */
export async function pickDue(
  tx: Queryable,
  handler: string,
  wanted: ReadonlyMap<string, number>,
  now: number,
): Promise<Array<{ id: number; flowKey: string; eventId: number }>> {
  if (wanted.size === 0) return [];
  const rows = await tx.query<{ id: number | string; flow_key: string; event_id: number | string }>(
    `SELECT d.id, d.flow_key, d.event_id FROM unnest($2::text[], $3::int[]) AS u(flow_key, n)
     CROSS JOIN LATERAL (
       SELECT d.id, d.flow_key, d.event_id FROM hookrun.handler_deliveries d
       WHERE d.handler = $1 AND d.flow_key = u.flow_key AND d.status IN ('pending', 'failed') AND d.run_after <= $4::timestamptz
       ORDER BY d.rank, d.event_id LIMIT u.n FOR UPDATE OF d SKIP LOCKED) d`,
    [handler, [...wanted.keys()], [...wanted.values()], iso(now)],
  );
  return rows.map((r) => ({ id: Number(r.id), flowKey: r.flow_key, eventId: Number(r.event_id) }));
}

/** The head of each ordered key: its earliest waiting delivery by event, due or not (nothing overtakes it). */
export async function pickHeads(
  tx: Queryable,
  handler: string,
  keys: readonly string[],
): Promise<Array<{ id: number; flowKey: string; eventId: number; runAfter: number }>> {
  if (keys.length === 0) return [];
  const rows = await tx.query<{ id: number | string; flow_key: string; event_id: number | string; run_after: Date | string }>(
    `SELECT d.id, d.flow_key, d.event_id, d.run_after FROM unnest($2::text[]) AS u(flow_key)
     CROSS JOIN LATERAL (
       SELECT d.id, d.flow_key, d.event_id, d.run_after FROM hookrun.handler_deliveries d
       WHERE d.handler = $1 AND d.flow_key = u.flow_key AND d.status IN ('pending', 'failed')
       ORDER BY d.rank, d.event_id LIMIT 1 FOR UPDATE OF d SKIP LOCKED) d`,
    [handler, keys],
  );
  return rows.map((r) => ({ id: Number(r.id), flowKey: r.flow_key, eventId: Number(r.event_id), runAfter: ms(r.run_after)! }));
}

/**
 * Debounce: run each key's newest waiting delivery and fold the others into
 * it (`debounced`), carrying their events (and the ones they had folded) in
 * its `debounced_ids`. Rows another claim holds are left for the next round.
 * Returns the chosen deliveries and the events folded.
 */
export async function foldDebounced(
  tx: Queryable,
  handler: string,
  keys: readonly string[],
  now: number,
): Promise<{ chosen: Array<{ id: number; flowKey: string; eventId: number }>; folded: number[] }> {
  if (keys.length === 0) return { chosen: [], folded: [] };
  const rows = await tx.query<{ id: number | string; flow_key: string; event_id: number | string; folded: Array<number | string> | null }>(
    `WITH newest AS (
       SELECT d.id, d.flow_key, d.event_id FROM unnest($2::text[]) AS u(flow_key)
       CROSS JOIN LATERAL (
         SELECT d.id, d.flow_key, d.event_id FROM hookrun.handler_deliveries d
         WHERE d.handler = $1 AND d.flow_key = u.flow_key AND d.status IN ('pending', 'failed')
         ORDER BY d.rank DESC, d.event_id DESC LIMIT 1 FOR UPDATE OF d SKIP LOCKED) d
     ), older AS (
       SELECT o.id, n.id AS into_id FROM newest n
       JOIN hookrun.handler_deliveries o ON o.handler = $1 AND o.flow_key = n.flow_key AND o.status IN ('pending', 'failed') AND o.id <> n.id
       FOR UPDATE OF o SKIP LOCKED
     ), folded AS (
       UPDATE hookrun.handler_deliveries d SET status = 'debounced', finished_at = $3::timestamptz, locked_until = NULL
       FROM older WHERE d.id = older.id
       RETURNING older.into_id, d.event_id, d.debounced_ids
     )
     SELECT n.id, n.flow_key, n.event_id,
       (SELECT array_agg(DISTINCT x) FROM (SELECT f.event_id AS x FROM folded f WHERE f.into_id = n.id
          UNION ALL SELECT unnest(f.debounced_ids) FROM folded f WHERE f.into_id = n.id) xs) AS folded
     FROM newest n`,
    [handler, keys, iso(now)],
  );
  const folded: number[] = [];
  const chosen = rows.map((r) => {
    const ids = (r.folded ?? []).map(Number);
    folded.push(...ids);
    return { id: Number(r.id), flowKey: r.flow_key, eventId: Number(r.event_id), folded: ids };
  });
  for (const c of chosen)
    if (c.folded.length > 0)
      await tx.query(
        `UPDATE hookrun.handler_deliveries SET debounced_ids = (SELECT array_agg(DISTINCT x ORDER BY x) FROM unnest(coalesce(debounced_ids, '{}') || $2::bigint[]) AS x) WHERE id = $1`,
        [c.id, c.folded],
      );
  return { chosen, folded: folded.filter((id) => !chosen.some((c) => c.eventId === id)) };
}

/** Mark the chosen deliveries running from their start slots, leased; returns them with their events, as the runner takes them. */
export async function startDeliveries(tx: Queryable, chosen: ReadonlyArray<{ id: number; startAt: number }>, leaseMs: number): Promise<ClaimedRow[]> {
  if (chosen.length === 0) return [];
  return tx.query<ClaimedRow>(
    `WITH started AS (
       UPDATE hookrun.handler_deliveries d
       SET status = 'running', attempts = d.attempts + 1, started_at = u.started_at, locked_until = u.started_at + $3::interval
       FROM unnest($1::bigint[], $2::timestamptz[]) AS u(id, started_at) WHERE d.id = u.id
       RETURNING d.id, d.event_id, d.handler, d.attempts, d.flow_key, d.shared, d.debounced_ids, d.started_at
     )
     SELECT s.id AS delivery_id, s.handler, s.attempts, s.flow_key, s.shared, s.debounced_ids, s.started_at,
            e.id, e.source, e.key, e.type, e.payload, e.received_at, e.order_key
     FROM started s JOIN hookrun.webhook_events e ON e.id = s.event_id ORDER BY e.id`,
    [chosen.map((c) => c.id), chosen.map((c) => iso(c.startAt)), `${leaseMs} milliseconds`],
  );
}

/** Move each key's rate state on to after its last granted slot. */
export async function setKeyTats(tx: Queryable, handler: string, tats: ReadonlyMap<string, number>): Promise<void> {
  if (tats.size === 0) return;
  await tx.query(
    `UPDATE hookrun.flow_keys k SET tat = u.tat FROM unnest($2::text[], $3::timestamptz[]) AS u(flow_key, tat) WHERE k.handler = $1 AND k.flow_key = u.flow_key`,
    [handler, [...tats.keys()], [...tats.values()].map(iso)],
  );
}

/** Move the handler's rate state on (a rate limit on the whole handler). */
export async function setControlTat(tx: Queryable, handler: string, tat: number): Promise<void> {
  await tx.query(`UPDATE hookrun.handler_controls SET tat = $2::timestamptz WHERE handler = $1`, [handler, iso(tat)]);
}

/** When the handler's next key may be ready (ms epoch). */
export async function nextReadyAt(tx: Queryable, handler: string): Promise<number | undefined> {
  const [row] = await tx.query<{ at: Date | string | null }>(`SELECT min(ready_at) AS at FROM hookrun.flow_keys WHERE handler = $1`, [handler]);
  return ms(row?.at);
}

/** The lowest id of a stored event not yet turned into deliveries: an ordered delivery after it waits, in case the earlier event is of its key. */
export async function firstNewEvent(tx: Queryable): Promise<number> {
  const [row] = await tx.query<{ id: number | string | null }>(`SELECT min(event_id) AS id FROM hookrun.new_events`);
  return row?.id === null || row?.id === undefined ? Infinity : Number(row.id);
}
