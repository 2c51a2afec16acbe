import { listAttempts, type EventAttempt } from './events.js';
import type { Database } from './database.js';

/** A handler's delivery of an event: its state, its attempts in this run and what it waits for. */
export interface EventDelivery {
  handler: string;
  /** pending | running | failed | processed | dead | parked | debounced */
  status: string;
  /** Its flow key (null: a handler without flow options). */
  flowKey: string | null;
  attempts: number;
  run: number;
  runAfter: Date;
  lastError: string | null;
  /** Debounce: the events folded into its run. */
  debouncedIds: number[];
}

/** The deliveries of an event, by handler: what its page, `GET /api/events/:id` and `hookrun events show` list. */
export async function listEventDeliveries(db: Database, eventId: number): Promise<EventDelivery[]> {
  const rows = await db.query<Omit<EventDelivery, 'debouncedIds'> & { runAfter: Date | string; debouncedIds: Array<number | string> | null }>(
    `SELECT handler, status, flow_key AS "flowKey", attempts, run, run_after AS "runAfter", last_error AS "lastError", debounced_ids AS "debouncedIds"
     FROM hookrun.handler_deliveries WHERE event_id = $1 ORDER BY handler`,
    [eventId],
  );
  return rows.map((r) => ({
    ...r,
    run: Number(r.run),
    attempts: Number(r.attempts),
    runAfter: new Date(r.runAfter),
    debouncedIds: (r.debouncedIds ?? []).map(Number),
  }));
}

/** A delivery with its history: its attempts and the replays of it, in order. */
export interface DeliveryWithHistory extends EventDelivery {
  history: EventAttempt[];
}

/** An event's deliveries, each with its own attempts, and the whole history in order: what `GET /api/events/:id` and `hookrun events show` give. */
export async function eventDeliveries(db: Database, eventId: number): Promise<{ deliveries: DeliveryWithHistory[]; history: EventAttempt[] }> {
  const history = await listAttempts(db, eventId);
  const deliveries = (await listEventDeliveries(db, eventId)).map((d) => ({ ...d, history: history.filter((a) => a.handler === d.handler) }));
  return { deliveries, history };
}
