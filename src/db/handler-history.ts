import type { Queryable } from './database.js';

/** One handler delivery (a handler's share of an event), as the handler's console page lists it. */
export interface HandlerDeliveryRow {
  id: number;
  eventId: number;
  type: string | null;
  flowKey: string | null;
  status: string;
  attempts: number;
  runAfter: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  lastError: string | null;
}

/** A handler's most recent deliveries, newest first (by id, the handler_deliveries primary key). */
export async function recentHandlerDeliveries(db: Queryable, handler: string, limit: number): Promise<HandlerDeliveryRow[]> {
  const rows = await db.query<HandlerDeliveryRow>(
    `SELECT d.id, d.event_id AS "eventId", e.type, d.flow_key AS "flowKey", d.status, d.attempts, d.run_after AS "runAfter",
       d.started_at AS "startedAt", d.finished_at AS "finishedAt", d.last_error AS "lastError"
     FROM hookrun.handler_deliveries d LEFT JOIN hookrun.webhook_events e ON e.id = d.event_id
     WHERE d.handler = $1 ORDER BY d.id DESC LIMIT $2`,
    [handler, limit],
  );
  return rows.map((r) => ({ ...r, id: Number(r.id), eventId: Number(r.eventId) }));
}

/** One failed run of a handler on an event (from event_attempts). */
export interface HandlerFailureRow {
  eventId: number;
  type: string | null;
  attempt: number;
  startedAt: Date;
  outcome: string;
  error: string | null;
}

/** A handler's most recent failed or dead attempts, newest first, with their errors: what to read when it is failing. */
export async function recentHandlerFailures(db: Queryable, handler: string, limit: number): Promise<HandlerFailureRow[]> {
  const rows = await db.query<HandlerFailureRow>(
    `SELECT a.event_id AS "eventId", e.type, a.attempt, a.started_at AS "startedAt", a.outcome, a.error
     FROM hookrun.event_attempts a LEFT JOIN hookrun.webhook_events e ON e.id = a.event_id
     WHERE a.handler = $1 AND a.outcome IN ('failed', 'dead') ORDER BY a.started_at DESC, a.id DESC LIMIT $2`,
    [handler, limit],
  );
  return rows.map((r) => ({ ...r, eventId: Number(r.eventId), startedAt: new Date(r.startedAt) }));
}
