import type { Clock } from '../clock.js';
import type { Queryable } from '../db/database.js';
import { AppError } from '../errors.js';
import { planReplay, type ReplayPlan } from './plan.js';
import { checkSelection, describeSelection, selectionFromJson, selectionToJson, type ReplaySelection, type SelectionJson } from './selection.js';

/** The slowest and fastest a bulk replay may go, in events per second, and what it goes at unless told. */
export const MIN_RATE = 1;
export const MAX_RATE = 1000;
export const DEFAULT_RATE = 10;

/** One bulk replay as the audit and its progress show it. */
export interface ReplayBatch {
  id: number;
  createdAt: Date;
  actor: string;
  selection: SelectionJson;
  /** The selection in words. */
  description: string;
  handler: string | null;
  maxEventId: number;
  rate: number;
  total: number;
  replayed: number;
  cursor: number;
  status: 'running' | 'done' | 'cancelled';
  finishedAt: Date | null;
}

/** What starting a bulk replay needs: which events, which handler (all when absent), how fast, and who asked. */
export interface StartReplay {
  selection: ReplaySelection;
  handler?: string;
  rate?: number;
  actor: string;
  /** The plan a dry run just made (its count and newest id are recorded); planned afresh when absent. */
  plan?: ReplayPlan;
}

const COLUMNS = `id, created_at AS "createdAt", actor, selection, handler, max_event_id AS "maxEventId", rate, total, replayed,
  cursor, status, finished_at AS "finishedAt"`;

type Row = Omit<ReplayBatch, 'description'> & { id: number | string; maxEventId: number | string; cursor: number | string };

function asBatch(row: Row): ReplayBatch {
  return {
    ...row,
    id: Number(row.id),
    maxEventId: Number(row.maxEventId),
    cursor: Number(row.cursor),
    description: describeSelection(selectionFromJson(row.selection)),
  };
}

/** A rate in bounds, or a 400 saying the bounds. */
export function checkRate(rate: number | undefined): number {
  const value = rate ?? DEFAULT_RATE;
  if (!Number.isInteger(value) || value < MIN_RATE || value > MAX_RATE)
    throw new AppError('bad_request', `rate: events per second, a whole number from ${MIN_RATE} to ${MAX_RATE} (default ${DEFAULT_RATE}).`);
  return value;
}

/**
 * Record a bulk replay for the runners to advance: up to the newest event id
 * existing now (later events are not taken), `total` the planned count.
 * Refuses an empty selection (nothing to replay) with a 400.
 */
export async function startReplay(db: Queryable, clock: Clock, start: StartReplay): Promise<ReplayBatch> {
  const rate = checkRate(start.rate);
  const selection = checkSelection(start.selection);
  const plan = start.plan ?? (await planReplay(db, selection, start.handler));
  if (plan.replayable === 0)
    throw new AppError(
      'bad_request',
      'Nothing to replay: no event matches this selection now (or all are being processed). Try a dry run to see what matches.',
    );
  const [row] = await db.query<Row>(
    `INSERT INTO hookrun.replay_batches (created_at, actor, selection, handler, max_event_id, rate, total)
     VALUES ($1, $2, $3::jsonb, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
    [
      new Date(clock.now()).toISOString(),
      start.actor.slice(0, 200),
      JSON.stringify(selectionToJson(selection)),
      start.handler ?? null,
      plan.maxEventId,
      rate,
      plan.replayable,
    ],
  );
  return asBatch(row!);
}

/** One bulk replay, or undefined. */
export async function getReplay(db: Queryable, id: number): Promise<ReplayBatch | undefined> {
  const [row] = await db.query<Row>(`SELECT ${COLUMNS} FROM hookrun.replay_batches WHERE id = $1`, [id]);
  return row && asBatch(row);
}

/** The audit: bulk replays newest first, `before` an id for the next page. */
export async function listReplays(db: Queryable, options: { limit?: number; before?: number } = {}): Promise<ReplayBatch[]> {
  const limit = Math.min(Math.max(Math.trunc(options.limit ?? 50), 1), 200);
  const rows = await db.query<Row>(`SELECT ${COLUMNS} FROM hookrun.replay_batches WHERE ($1::bigint IS NULL OR id < $1) ORDER BY id DESC LIMIT $2`, [
    options.before ?? null,
    limit,
  ]);
  return rows.map(asBatch);
}

/**
 * Stop a running bulk replay: no further event is put back (a slice being
 * replayed right now finishes first, the row lock orders the two). 404 for
 * an unknown id, 409 when it already ended.
 */
export async function cancelReplay(db: Queryable, clock: Clock, id: number): Promise<ReplayBatch> {
  const [row] = await db.query<Row>(
    `UPDATE hookrun.replay_batches SET status = 'cancelled', finished_at = $2, locked_until = NULL
     WHERE id = $1 AND status = 'running' RETURNING ${COLUMNS}`,
    [id, new Date(clock.now()).toISOString()],
  );
  if (row) return asBatch(row);
  const existing = await getReplay(db, id);
  if (!existing) throw new AppError('not_found', `No bulk replay with id ${id}. List them with "hookrun events replays".`);
  throw new AppError('conflict', `Bulk replay ${id} is already ${existing.status}; only a running one can be cancelled.`);
}
