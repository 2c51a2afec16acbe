import type { Clock } from '../clock.js';
import type { Database, Queryable } from '../db/database.js';
import { notifyEventsChannel } from '../inbox/queue-sql.js';
import { requeueEvents } from '../deliveries/requeue-sql.js';
import { batchActor } from './outcomes.js';
import { selectionConditions, selectionFromJson } from './selection.js';

/** `rate` events a second: a slice of `rate` events (or a part of it) is followed by a hold of its share of this, which is what makes `rate` per second. */
export const SLICE_MS = 1000;
/** At most this many events are put back in one transaction: a fast replay (1,000 a second) goes in slices of 100, a tenth of a second apart. */
export const MAX_SLICE_EVENTS = 100;
/**
 * A replay yields while the inbox has work waiting, but work that waited this
 * long is not being taken (no worker runs, a handler is gone): the replay goes
 * on at its rate rather than waiting for it.
 */
export const MAX_YIELD_MS = 5000;

/** What one step did: which batch it advanced or held (none due: undefined), how many events it put back, whether that batch is now done, and whether it yielded to waiting work. */
export interface AdvanceResult {
  batchId?: number;
  replayed: number;
  done: boolean;
  /** Nothing put back: the inbox had fresh events or this replay's last slice waiting; the batch is held until its next slice. */
  yielded?: true;
}

/** How a step treats the inbox's waiting work. */
export interface AdvanceOptions {
  /** Yield to waiting work (the default). Off only where no worker can be running (the CLI holding the embedded database): nothing would take it. */
  yieldToInbox?: boolean;
}

/**
 * Whether the inbox has work a replay must not add to: a received event not
 * yet turned into deliveries (fresh ingest: the worker is behind), or a
 * delivery a replay put back that no worker has claimed yet (a handler
 * without flow options, not paused: the inline queue). Only work that waited
 * less than MAX_YIELD_MS counts (received by the database's clock, put back
 * by the replay's).
 */
async function inboxHasWaitingWork(tx: Queryable, now: number): Promise<boolean> {
  const [row] = await tx.query<{ waiting: boolean }>(
    `SELECT EXISTS (
       SELECT 1 FROM hookrun.webhook_events e
       WHERE e.id = (SELECT max(n.event_id) FROM hookrun.new_events n) AND e.received_at > now() - make_interval(secs => $3)
     ) OR EXISTS (
       SELECT 1 FROM hookrun.handler_deliveries d
       WHERE d.flow_key IS NULL AND d.status = 'pending' AND d.run_after > $1::timestamptz AND d.run_after <= $2::timestamptz
         AND NOT EXISTS (SELECT 1 FROM hookrun.handler_controls c WHERE c.handler = d.handler AND c.paused)
     ) AS waiting`,
    [new Date(now - MAX_YIELD_MS).toISOString(), new Date(now).toISOString(), MAX_YIELD_MS / 1000],
  );
  return row?.waiting === true;
}

interface DueBatch {
  id: number | string;
  selection: unknown;
  handler: string | null;
  actor: string;
  max_event_id: number | string;
  rate: number;
  cursor: number | string;
}

/**
 * Advance one due bulk replay by one slice: the next `rate` events (at most
 * MAX_SLICE_EVENTS) in id order after its cursor (up to its `max_event_id`),
 * each reset as a replay resets it (one UPDATE for the slice), then the
 * cursor and count move and the batch is held for the slice's share of a
 * second. In one transaction holding the batch's row (SKIP LOCKED), so two
 * instances never take the same slice, and a cancel waits for the slice and
 * then stops the batch. A slice shorter than its size, or one that reached
 * `max_event_id`, was the last: the batch is done.
 *
 * The rate is a ceiling: while the inbox has fresh events waiting, or the
 * replay's last slice is not claimed yet, the step puts nothing back and
 * holds the batch until its next slice (`yielded`). So received events are
 * planned and run before any more replayed work is queued, and a replay never
 * queues more than a slice ahead of the worker, whatever its rate.
 */
export async function advanceReplays(db: Database, clock: Clock, options: AdvanceOptions = {}): Promise<AdvanceResult> {
  const now = clock.now();
  const nowIso = new Date(now).toISOString();
  const result = await db.transaction(async (tx): Promise<AdvanceResult> => {
    const [batch] = await tx.query<DueBatch>(
      `SELECT id, selection, handler, actor, max_event_id, rate, cursor FROM hookrun.replay_batches
       WHERE status = 'running' AND (locked_until IS NULL OR locked_until <= $1) ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED`,
      [nowIso],
    );
    if (!batch) return { replayed: 0, done: false };
    const id = Number(batch.id);
    const size = Math.min(batch.rate, MAX_SLICE_EVENTS);
    const heldUntil = new Date(now + Math.ceil((SLICE_MS * size) / batch.rate)).toISOString();
    if (options.yieldToInbox !== false && (await inboxHasWaitingWork(tx, now))) {
      await tx.query(`UPDATE hookrun.replay_batches SET locked_until = $2 WHERE id = $1`, [id, heldUntil]);
      return { batchId: id, replayed: 0, done: false, yielded: true };
    }
    const params: unknown[] = [];
    const param = (value: unknown) => `$${params.push(value)}`;
    const conditions = [
      ...selectionConditions(selectionFromJson(batch.selection), param),
      `e.id > ${param(batch.cursor)}`,
      `e.id <= ${param(batch.max_event_id)}`,
    ];
    const slice = await tx.query<{ id: number | string }>(
      `SELECT e.id FROM hookrun.webhook_events e WHERE ${conditions.join(' AND ')} ORDER BY e.id LIMIT ${param(size)}`,
      params,
    );
    const ids = slice.map((row) => Number(row.id));
    const actor = batchActor(id, batch.actor);
    const replayed =
      ids.length === 0 ? [] : (await requeueEvents(tx, { ids }, { now, resetAttempts: true, handler: batch.handler ?? undefined, actor })).events;
    const done = ids.length < size || ids.at(-1) === Number(batch.max_event_id);
    await tx.query(
      `UPDATE hookrun.replay_batches SET cursor = $2, replayed = replayed + $3,
         status = CASE WHEN $4::boolean THEN 'done' ELSE status END, finished_at = CASE WHEN $4::boolean THEN $5::timestamptz END,
         locked_until = CASE WHEN $4::boolean THEN NULL ELSE $6::timestamptz END
       WHERE id = $1`,
      [id, ids.length > 0 ? ids[ids.length - 1] : batch.cursor, replayed.length, done, nowIso, heldUntil],
    );
    return { batchId: id, replayed: replayed.length, done };
  });
  if (result.replayed > 0) await notifyEventsChannel(db);
  return result;
}

/** When the next running batch may be advanced (ms since the epoch; 0: now), or undefined when none runs. */
export async function nextReplayDue(db: Database): Promise<number | undefined> {
  const [row] = await db.query<{ due: Date | string | null; free: number; running: number }>(
    `SELECT min(locked_until) AS due, count(*) FILTER (WHERE locked_until IS NULL)::int AS free, count(*)::int AS running
     FROM hookrun.replay_batches WHERE status = 'running'`,
  );
  if (!row || row.running === 0) return undefined;
  return row.free > 0 || row.due === null ? 0 : new Date(row.due).getTime();
}
