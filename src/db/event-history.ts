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
  /** Its durable steps, in the order they ran. */
  steps: DeliveryStep[];
}

/** One durable step of a delivery, as an event's page and `hookrun events show` list it. */
export interface DeliveryStep {
  id: string;
  /** succeeded | failed | sleeping | waiting */
  status: string;
  attempts: number;
  durationMs: number | null;
  error: string | null;
  /** A sleep's end, a wait's timeout. */
  until: Date | null;
  /** A wait: the event name, path and value it waits for (`payments:invoice.paid data.object.customer = cus_1`). */
  waitingFor: string | null;
}

/** The steps of an event's deliveries, by handler. */
async function listDeliverySteps(db: Database, eventId: number): Promise<Map<string, DeliveryStep[]>> {
  const rows = await db.query<{
    handler: string;
    step_id: string;
    status: string;
    attempts: number;
    duration_ms: number | null;
    error: string | null;
    wake_at: Date | string | null;
    wait_key: string | null;
  }>(
    `SELECT d.handler, s.step_id, s.status, s.attempts, s.duration_ms, s.error, s.wake_at, s.wait_key
     FROM hookrun.handler_deliveries d JOIN hookrun.delivery_steps s ON s.delivery_id = d.id
     WHERE d.event_id = $1 ORDER BY d.handler, s.seq`,
    [eventId],
  );
  const byHandler = new Map<string, DeliveryStep[]>();
  for (const r of rows) {
    const [name, path, value] = r.wait_key?.split('\u001f') ?? [];
    const step: DeliveryStep = {
      id: r.step_id,
      status: r.status,
      attempts: Number(r.attempts),
      durationMs: r.duration_ms === null ? null : Number(r.duration_ms),
      error: r.error,
      until: r.wake_at === null ? null : new Date(r.wake_at),
      waitingFor: r.status === 'waiting' && name ? `${name} ${path} = ${value}` : null,
    };
    byHandler.set(r.handler, [...(byHandler.get(r.handler) ?? []), step]);
  }
  return byHandler;
}

/** The deliveries of an event, by handler: what its page, `GET /api/events/:id` and `hookrun events show` list. */
export async function listEventDeliveries(db: Database, eventId: number): Promise<EventDelivery[]> {
  const steps = await listDeliverySteps(db, eventId);
  const rows = await db.query<Omit<EventDelivery, 'debouncedIds' | 'steps'> & { runAfter: Date | string; debouncedIds: Array<number | string> | null }>(
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
    steps: steps.get(r.handler) ?? [],
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
