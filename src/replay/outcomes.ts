import type { Queryable } from '../db/database.js';

/**
 * Who a bulk replay's step says put an event back, in each delivery's
 * history (`replayed` rows): the batch's id first, so its outcome can be
 * read back from that history.
 */
export const batchActor = (batchId: number, actor: string) => `bulk replay #${batchId} (${actor})`;

/** The batch id in a `batchActor` text, as SQL over the column `actor`. */
const BATCH_OF_ACTOR = `substring(a.actor from '^bulk replay #([0-9]+) ')::bigint`;

/** How the events a bulk replay put back ended, as they are now. */
export interface ReplayOutcome {
  /** Processed (or ignored) since. */
  succeeded: number;
  /** Failed again: dead, or failing and retrying. */
  failedAgain: number;
  /** Not finished yet: waiting or running. */
  unfinished: number;
}

/** An event a bulk replay put back that failed again. */
export interface FailedAgainEvent {
  id: number;
  source: string;
  type: string;
  status: string;
  lastError: string | null;
}

/** The events each batch put back (`$1` the batch ids, `$2` the oldest batch's start: the history before it holds none of theirs). */
const TOUCHED = `touched AS (
  SELECT DISTINCT ${BATCH_OF_ACTOR} AS batch, a.event_id FROM hookrun.event_attempts a
  WHERE a.outcome = 'replayed' AND a.started_at >= $2::timestamptz AND a.actor LIKE 'bulk replay #%' AND ${BATCH_OF_ACTOR} = ANY($1::bigint[])
)`;

/**
 * How each bulk replay's events ended, by batch id, read from their history
 * (the `replayed` rows its steps wrote) and their status now: "69 put back"
 * is not "69 succeeded". An event a later replay ran again counts as it is
 * now. Batches that put nothing back are absent.
 */
export async function replayOutcomes(db: Queryable, batches: ReadonlyArray<{ id: number; createdAt: Date }>): Promise<Map<number, ReplayOutcome>> {
  if (batches.length === 0) return new Map();
  const since = new Date(Math.min(...batches.map((b) => new Date(b.createdAt).getTime()))).toISOString();
  const rows = await db.query<{ batch: number | string; succeeded: number; failed_again: number; unfinished: number }>(
    `WITH ${TOUCHED}
     SELECT t.batch, count(*) FILTER (WHERE e.status IN ('processed', 'ignored'))::int AS succeeded,
       count(*) FILTER (WHERE e.status IN ('failed', 'dead'))::int AS failed_again,
       count(*) FILTER (WHERE e.status NOT IN ('processed', 'ignored', 'failed', 'dead'))::int AS unfinished
     FROM touched t JOIN hookrun.webhook_events e ON e.id = t.event_id GROUP BY t.batch`,
    [batches.map((b) => b.id), since],
  );
  return new Map(rows.map((r) => [Number(r.batch), { succeeded: r.succeeded, failedAgain: r.failed_again, unfinished: r.unfinished }]));
}

/** The events a bulk replay put back that failed again, oldest first, at most `limit`: the ones to look at next. */
export async function failedAgainEvents(db: Queryable, batch: { id: number; createdAt: Date }, limit: number): Promise<FailedAgainEvent[]> {
  const rows = await db.query<FailedAgainEvent & { id: number | string }>(
    `WITH ${TOUCHED}
     SELECT e.id, e.source, e.type, e.status, e.last_error AS "lastError" FROM touched t JOIN hookrun.webhook_events e ON e.id = t.event_id
     WHERE e.status IN ('failed', 'dead') ORDER BY e.id LIMIT $3`,
    [[batch.id], new Date(batch.createdAt).toISOString(), limit],
  );
  return rows.map((r) => ({ ...r, id: Number(r.id) }));
}
