import type { Queryable } from '../db/database.js';
import { summarizeEvents } from './event-summary.js';

/** Which events a requeue touches: a slice of ids (one event, or a bulk replay's), or every event with a status (optionally narrowed). */
export type RequeueTarget = { ids: readonly number[] } | { status: string; source?: string; type?: string };

/** How a replay treats what it puts back. */
export interface RequeueOptions {
  now: number;
  /** A fresh retry budget (attempts from 0 in the new run); otherwise they keep counting. */
  resetAttempts: boolean;
  /** Run only this handler's delivery again. */
  handler?: string;
  /** Who asked, recorded in each delivery's history ("console (session …)", "admin-api", "cli:user@host"). */
  actor: string;
  /** Forget the deliveries' steps, so every step runs again; by default a replay keeps the steps that succeeded and goes on at the first that has not. */
  fromStart?: boolean;
}

/** What a requeue did: the events put back, and those it left because their only deliveries were running. */
export interface Requeued {
  events: number[];
  busy: number[];
}

interface Candidate {
  id: number | string | null;
  event_id: number | string;
  handler: string | null;
  flow_key: string | null;
  status: string | null;
  chosen: boolean;
}

/**
 * Which deliveries (`d`, of event `e`) a replay starts again, as SQL: one
 * handler's when named (`handler`, a parameter, may be null); else, for a
 * finished event, all of them; for a dead (or unfinished) one, those that
 * died, were parked, are failing or wait (the finished ones stay done). A running
 * delivery is never touched (its worker owns it). The dry run counts with it.
 */
export function replayChoosesSql(handler: string): string {
  return `(d.status IS NOT NULL AND d.status <> 'running' AND CASE
    WHEN ${handler}::text IS NOT NULL THEN d.handler = ${handler}::text
    WHEN e.status IN ('processed', 'ignored') THEN true
    ELSE d.status IN ('dead', 'parked', 'failed', 'pending') END)`;
}

/**
 * Put events back in the queue, in the caller's transaction. An event with
 * deliveries gets the chosen ones back as `pending`, due now, in a new run
 * (a `replayed` row in their history says who and when), its flow keys made
 * ready and its status derived again; an event without any (ignored, or
 * stored before an upgrade) is turned into deliveries anew by the next claim,
 * with the handlers that take it now. Locks keys, then deliveries, then events.
 */
export async function requeueEvents(tx: Queryable, target: RequeueTarget, o: RequeueOptions): Promise<Requeued> {
  const params: unknown[] = [o.handler ?? null];
  const where =
    'ids' in target
      ? `e.id = ANY($${params.push(target.ids)}::bigint[])`
      : `e.status = $${params.push(target.status)} AND ($${params.push(target.source ?? null)}::text IS NULL OR e.source = $${params.length}) AND ($${params.push(target.type ?? null)}::text IS NULL OR e.type = $${params.length})`;
  const rows = await tx.query<Candidate>(
    `SELECT d.id, e.id AS event_id, d.handler, d.flow_key, d.status, ${replayChoosesSql('$1')} AS chosen
     FROM hookrun.webhook_events e LEFT JOIN hookrun.handler_deliveries d ON d.event_id = e.id
     WHERE ${where} AND NOT EXISTS (SELECT 1 FROM hookrun.new_events n WHERE n.event_id = e.id)`,
    params,
  );
  const byEvent = new Map<number, Candidate[]>();
  for (const row of rows) byEvent.set(Number(row.event_id), [...(byEvent.get(Number(row.event_id)) ?? []), row]);
  const fresh: number[] = [];
  const picked: Candidate[] = [];
  const busy: number[] = [];
  for (const [eventId, list] of byEvent) {
    if (list.every((c) => c.status === null)) {
      if (o.handler === undefined) fresh.push(eventId);
      continue;
    }
    const some = list.filter((c) => c.chosen);
    if (some.length === 0 && list.some((c) => c.status === 'running')) busy.push(eventId);
    picked.push(...some);
  }
  await lockFlowKeys(tx, picked, o.now);
  const reset = await resetDeliveries(tx, picked, o);
  if (fresh.length > 0) {
    await tx.query(`INSERT INTO hookrun.new_events (event_id) SELECT unnest($1::bigint[]) ON CONFLICT DO NOTHING`, [fresh]);
  }
  await summarizeEvents(tx, reset, o.now);
  if (fresh.length > 0)
    await tx.query(
      `UPDATE hookrun.webhook_events SET status = 'pending', processed_at = NULL
       WHERE id IN (SELECT id FROM hookrun.webhook_events WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE)`,
      [fresh],
    );
  return { events: [...new Set([...reset, ...fresh])], busy };
}

/** The key rows of the flow-controlled deliveries put back: made or brought forward, in (handler, key) order. */
async function lockFlowKeys(tx: Queryable, picked: readonly Candidate[], now: number): Promise<void> {
  const keys = new Map<string, { handler: string; key: string }>();
  for (const c of picked) if (c.flow_key !== null && c.handler !== null) keys.set(`${c.handler}\u0000${c.flow_key}`, { handler: c.handler, key: c.flow_key });
  if (keys.size === 0) return;
  const at = new Date(now).toISOString();
  await tx.query(
    `INSERT INTO hookrun.flow_keys AS k (handler, flow_key, ready_at, rank)
     SELECT u.handler, u.flow_key, $3::timestamptz, $3::timestamptz FROM unnest($1::text[], $2::text[]) AS u(handler, flow_key)
     ORDER BY u.handler COLLATE "C", u.flow_key COLLATE "C"
     ON CONFLICT (handler, flow_key) DO UPDATE SET ready_at = least(k.ready_at, excluded.ready_at), idle_until = NULL`,
    [[...keys.values()].map((k) => k.handler), [...keys.values()].map((k) => k.key), at],
  );
}

/**
 * The chosen deliveries back to pending in a new run, with a `replayed` row
 * each (and the processed attempt they supersede kept as history), their
 * steps forgotten when replayed from the start; returns their events.
 */
async function resetDeliveries(tx: Queryable, picked: readonly Candidate[], o: RequeueOptions): Promise<number[]> {
  if (picked.length === 0) return [];
  const rows = await tx.query<{ event_id: number | string }>(
    `WITH superseded AS (
       INSERT INTO hookrun.event_attempts (event_id, attempt, run, handler, started_at, duration_ms, outcome)
       SELECT event_id, attempts, run, handler, coalesce(started_at, finished_at, $3::timestamptz), coalesce(duration_ms, 0), 'processed'
       FROM hookrun.handler_deliveries WHERE id = ANY($1::bigint[]) AND status = 'processed'
     ), reset AS (
       UPDATE hookrun.handler_deliveries d
       SET status = 'pending', attempts = CASE WHEN $2::boolean THEN 0 ELSE d.attempts END, run = d.run + 1,
           run_after = $3::timestamptz, locked_until = NULL, last_error = NULL, finished_at = NULL
       WHERE d.id = ANY($1::bigint[]) AND d.status <> 'running'
       RETURNING d.id, d.event_id, d.handler, d.run, d.attempts
     ), history AS (
       INSERT INTO hookrun.event_attempts (event_id, attempt, run, handler, started_at, duration_ms, outcome, actor)
       SELECT event_id, attempts, run, handler, $3::timestamptz, 0, 'replayed', $4 FROM reset
     ), forgotten AS (
       DELETE FROM hookrun.delivery_steps s USING reset WHERE $5::boolean AND s.delivery_id = reset.id
     )
     SELECT DISTINCT event_id FROM reset`,
    [picked.map((c) => Number(c.id)), o.resetAttempts, new Date(o.now).toISOString(), o.actor, o.fromStart === true],
  );
  return rows.map((r) => Number(r.event_id));
}
