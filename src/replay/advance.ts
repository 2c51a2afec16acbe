import type { Clock } from '../clock.js';
import type { Database } from '../db/database.js';
import { notifyEventsChannel } from '../inbox/queue-sql.js';
import { requeueEvents } from '../deliveries/requeue-sql.js';
import { selectionConditions, selectionFromJson } from './selection.js';

/** A slice takes a second: after one, the batch is held (`locked_until`) for this long, which is what makes `rate` per second. */
export const SLICE_MS = 1000;

/** What one step did: which batch it advanced (none due: undefined), how many events it put back, and whether that batch is now done. */
export interface AdvanceResult {
  batchId?: number;
  replayed: number;
  done: boolean;
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
 * Advance one due bulk replay by one slice: the next `rate` events in id
 * order after its cursor (up to its `max_event_id`), each reset as a replay
 * resets it (one UPDATE for the slice), then the cursor and count move and the
 * batch is held for a second. In one transaction holding the batch's row
 * (SKIP LOCKED), so two instances never take the same slice, and a cancel
 * waits for the slice and then stops the batch. A slice shorter than `rate`
 * was the last: the batch is done.
 */
export async function advanceReplays(db: Database, clock: Clock): Promise<AdvanceResult> {
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
    const params: unknown[] = [];
    const param = (value: unknown) => `$${params.push(value)}`;
    const conditions = [
      ...selectionConditions(selectionFromJson(batch.selection), param),
      `e.id > ${param(batch.cursor)}`,
      `e.id <= ${param(batch.max_event_id)}`,
    ];
    const slice = await tx.query<{ id: number | string }>(
      `SELECT e.id FROM hookrun.webhook_events e WHERE ${conditions.join(' AND ')} ORDER BY e.id LIMIT ${param(batch.rate)}`,
      params,
    );
    const ids = slice.map((row) => Number(row.id));
    const actor = `bulk replay #${id} (${batch.actor})`;
    const replayed =
      ids.length === 0 ? [] : (await requeueEvents(tx, { ids }, { now, resetAttempts: true, handler: batch.handler ?? undefined, actor })).events;
    const done = ids.length < batch.rate;
    await tx.query(
      `UPDATE hookrun.replay_batches SET cursor = $2, replayed = replayed + $3,
         status = CASE WHEN $4::boolean THEN 'done' ELSE status END, finished_at = CASE WHEN $4::boolean THEN $5::timestamptz END,
         locked_until = CASE WHEN $4::boolean THEN NULL ELSE $6::timestamptz END
       WHERE id = $1`,
      [id, ids.length > 0 ? ids[ids.length - 1] : batch.cursor, replayed.length, done, nowIso, new Date(now + SLICE_MS).toISOString()],
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
