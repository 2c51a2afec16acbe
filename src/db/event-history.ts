import type { Database } from './database.js';
import type { EventAttempt } from './events.js';

/** One processing attempt with the run it belongs to: a replay starts a new run, whose attempts count from 1 again. */
export interface AttemptInRun extends EventAttempt {
  /** 1 for the event's first run of this handler, 2 after its first replay, … */
  run: number;
}

/**
 * Every attempt of an event in the order they ran, each numbered with its
 * run: per handler, an attempt number that does not grow (a replay resets
 * the count) opens the next run, so "#1" twice reads as "run 1 #1, run 2 #1".
 */
export async function listAttemptRuns(db: Database, eventId: number): Promise<AttemptInRun[]> {
  const rows = await db.query<Omit<AttemptInRun, 'run'> & { startedAt: Date | string }>(
    `SELECT attempt, handler, started_at AS "startedAt", duration_ms AS "durationMs", outcome, error
     FROM hookrun.event_attempts WHERE event_id = $1 ORDER BY id`,
    [eventId],
  );
  const last = new Map<string, { run: number; attempt: number }>();
  return rows.map((r) => {
    const name = r.handler ?? '';
    const before = last.get(name);
    const run = before === undefined ? 1 : r.attempt <= before.attempt ? before.run + 1 : before.run;
    last.set(name, { run, attempt: r.attempt });
    return { ...r, run, startedAt: new Date(r.startedAt) };
  });
}

/** A handler's delivery of an event (flow-controlled handlers): its state and what it waits for. */
export interface EventDelivery {
  handler: string;
  /** waiting | running | debounced | parked | dead | done */
  status: string;
  flowKey: string;
  attempts: number;
  runAfter: Date;
  lastError: string | null;
}

/** The handler deliveries of an event, by handler: what a waiting or parked event's page explains. */
export async function listEventDeliveries(db: Database, eventId: number): Promise<EventDelivery[]> {
  const rows = await db.query<EventDelivery & { runAfter: Date | string }>(
    `SELECT handler, status, flow_key AS "flowKey", attempts, run_after AS "runAfter", last_error AS "lastError"
     FROM hookrun.handler_deliveries WHERE event_id = $1 ORDER BY handler`,
    [eventId],
  );
  return rows.map((r) => ({ ...r, runAfter: new Date(r.runAfter) }));
}
