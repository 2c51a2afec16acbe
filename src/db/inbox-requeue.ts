import type { Queryable } from './database.js';

/** Which events a requeue touches: one id, a slice of ids (a bulk replay's), or every event with a status (optionally narrowed). */
export type RequeueTarget = { id: number } | { ids: number[] } | { status: string; source?: string; type?: string };

/**
 * A replay's new per-handler state. All handlers: a finished event runs them
 * all again; a dead one runs again only the handlers that died (the others
 * stay done) and hands its flow-controlled ones over again (their dead or
 * parked deliveries start afresh, finished ones stay). One handler (`$3`): only it runs (it is taken out of `done`,
 * and, unless the event is still retrying others, named in `only`).
 */
const REPLAY_DELIVERIES = `
  CASE
    WHEN $3::text IS NOT NULL AND status = 'failed' THEN jsonb_build_object('done', coalesce(deliveries->'done', '{}'::jsonb) - $3::text)
    WHEN $3::text IS NOT NULL THEN jsonb_build_object('done', coalesce(deliveries->'done', '{}'::jsonb) - $3::text, 'only', jsonb_build_array($3::text))
    WHEN deliveries IS NULL OR status IN ('processed', 'ignored') THEN NULL
    ELSE jsonb_build_object('done', coalesce((SELECT jsonb_object_agg(k, v) FROM jsonb_each(deliveries->'done') AS d(k, v) WHERE v->>'status' NOT IN ('dead', 'queued')), '{}'::jsonb))
  END`;

/**
 * Put events back to `pending`, due now. A row being processed is never
 * touched (its worker still owns it). `resetAttempts` gives the event a full
 * retry budget again; otherwise attempts keep counting from where they were.
 * `handler`: run only that handler again (see REPLAY_DELIVERIES).
 */
export async function requeueEvents(
  db: Queryable,
  target: RequeueTarget,
  options: { now: number; resetAttempts: boolean; handler?: string },
): Promise<number[]> {
  const params: unknown[] = [new Date(options.now).toISOString(), options.resetAttempts, options.handler ?? null];
  let where: string;
  if ('id' in target) {
    params.push(target.id);
    where = `id = $4`;
  } else if ('ids' in target) {
    params.push(target.ids);
    where = `id = ANY($4::bigint[])`;
  } else {
    params.push(target.status, target.source ?? null, target.type ?? null);
    where = `status = $4 AND ($5::text IS NULL OR source = $5) AND ($6::text IS NULL OR type = $6)`;
  }
  const rows = await db.query<{ id: number }>(
    `UPDATE hookrun.webhook_events
     SET status = 'pending', attempts = CASE WHEN $2::boolean THEN 0 ELSE attempts END,
         next_attempt_at = $1::timestamptz, locked_until = NULL, processed_at = NULL,
         deliveries = ${REPLAY_DELIVERIES}
     WHERE ${where} AND status <> 'processing'
     RETURNING id`,
    params,
  );
  return rows.map((row) => Number(row.id));
}
