import type { Queryable } from './database.js';

/** An event as the live stream sends it: identity, time and the verified payload (never a secret). */
export interface FeedEvent {
  id: number;
  source: string;
  key: string;
  type: string;
  receivedAt: Date;
  payload: unknown;
}

/** What a stream asks for: events after its cursor, of one source or type. */
export interface FeedQuery {
  afterId: number;
  source?: string;
  type?: string;
  limit: number;
  /**
   * Also return events below the cursor received in the last this-many
   * seconds: on PostgreSQL, instances commit concurrently, so an id can become
   * visible after a higher one was read. The caller skips ids it already sent.
   */
  lateWindowSeconds: number;
  /** The late window looks only above this id: where the stream started, or the client's Last-Event-ID. */
  lateFloorId: number;
  /** Ids below the cursor already sent (the late window's re-read skips them). */
  alreadySent: number[];
}

/**
 * Read the next events for the live stream (`GET /api/events/stream`), oldest
 * first by id: a keyset read that any number of instances can serve, resumed
 * from `Last-Event-ID`.
 */
export function readEventFeed(db: Queryable, q: FeedQuery): Promise<FeedEvent[]> {
  return db.query<FeedEvent>(
    `SELECT id, source, key, type, received_at AS "receivedAt", payload FROM hookrun.webhook_events
     WHERE (id > $1 OR ($5 > 0 AND id > $7 AND received_at > now() - make_interval(secs => $5) AND id <> ALL($6::bigint[])))
       AND ($2::text IS NULL OR source = $2) AND ($3::text IS NULL OR type = $3)
     ORDER BY id LIMIT $4`,
    [q.afterId, q.source ?? null, q.type ?? null, q.limit, q.lateWindowSeconds, q.alreadySent, q.lateFloorId],
  );
}
