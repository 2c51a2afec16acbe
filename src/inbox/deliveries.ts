import type { ClaimedEvent, Deliveries, HandlerRun, Settlement } from '../db/inbox-queue.js';
import type { RegisteredHandler } from './handlers/registry.js';
import { MAX_ERROR_CHARS } from './settle.js';

/** How one handler's run in this attempt ended, with when it started and how long it took. */
export interface HandlerOutcome {
  handler: string;
  settlement: Settlement;
  startedAt: number;
  durationMs: number;
}

/** Whether the event's handlers settle apart (several of them, or state kept from an earlier attempt or replay). */
export function settlesApart(event: ClaimedEvent, handlers: readonly RegisteredHandler[]): boolean {
  return handlers.length > 1 || event.deliveries !== null;
}

/**
 * The handlers still to run for this event: those that take it, narrowed to
 * a replay's `only`, less those already done (processed or dead) in an
 * earlier attempt. A handler that failed runs again; the others do not.
 */
export function pendingHandlers(event: ClaimedEvent, handlers: readonly RegisteredHandler[]): readonly RegisteredHandler[] {
  const deliveries = event.deliveries;
  if (deliveries === null) return handlers;
  return handlers.filter((h) => deliveries.done[h.name] === undefined && (deliveries.only === undefined || deliveries.only.includes(h.name)));
}

const errorOf = (s: Settlement) => ('error' in s ? s.error : undefined);
const joined = (parts: string[]) => parts.join('; ').slice(0, MAX_ERROR_CHARS);

/**
 * Fold this attempt's handler outcomes into the event's one settlement. With
 * one handler the event's status is its handler's (its settlement, given the
 * handler's name and timing). With several: any failed
 * handler makes the event `failed` (due when the soonest of them is), and
 * only the failed ones run at the next claim; else any dead handler makes it
 * `dead`; else `waiting` if one was handed to flow control; else `processed`.
 * Each finished (or handed-over) handler is kept in `deliveries`.
 */
export function settleHandlers(event: ClaimedEvent, outcomes: HandlerOutcome[], apart: boolean): Settlement {
  if (!apart && outcomes.length === 1) {
    // One handler per event, the common case: its own settlement, completed in place (no run list to allocate per event).
    const [{ handler, settlement, startedAt, durationMs }] = outcomes as [HandlerOutcome];
    settlement.handler = handler;
    settlement.timing = { startedAt, durationMs };
    return settlement;
  }
  const runs: HandlerRun[] = outcomes.map((o) => ({
    handler: o.handler,
    outcome: o.settlement.status,
    error: errorOf(o.settlement),
    startedAt: o.startedAt,
    durationMs: o.durationMs,
  }));
  const base = { id: event.id, attempts: event.attempts, runs };
  const done: Deliveries['done'] = { ...event.deliveries?.done };
  const failed: Array<{ handler: string; error: string; at: Date }> = [];
  for (const { handler, settlement } of outcomes) {
    if (settlement.status === 'failed') failed.push({ handler, error: settlement.error, at: settlement.nextAttemptAt });
    else if (settlement.status === 'dead') done[handler] = { status: 'dead', error: settlement.error };
    else if (settlement.status === 'waiting') done[handler] = { status: 'queued' };
    else done[handler] = { status: 'processed' };
  }
  if (failed.length > 0) {
    const nextAttemptAt = new Date(Math.min(...failed.map((f) => f.at.getTime())));
    const only = event.deliveries?.only;
    return {
      ...base,
      status: 'failed',
      error: joined(failed.map((f) => `${f.handler}: ${f.error}`)),
      nextAttemptAt,
      deliveries: only ? { done, only } : { done },
    };
  }
  const dead = Object.entries(done).filter(([, d]) => d.status === 'dead');
  if (dead.length > 0) return { ...base, status: 'dead', error: joined(dead.map(([name, d]) => `${name}: ${d.error ?? 'dead'}`)), deliveries: { done } };
  // Handed to flow control (now or in an earlier attempt): the event waits for those deliveries (finishWaitingEvents).
  if (Object.values(done).some((d) => d.status === 'queued')) return { ...base, status: 'waiting', deliveries: { done } };
  return { ...base, status: 'processed', deliveries: { done } };
}

/** A handler's outcome, timed from `started` (performance.now()) and stamped with `startedAt` (the clock). */
export const outcome = (handler: RegisteredHandler, settlement: Settlement, startedAt: number, started: number): HandlerOutcome => ({
  handler: handler.name,
  settlement,
  startedAt,
  durationMs: performance.now() - started,
});

/** A fresh `processed` settlement for the event (each handler's own: settleHandlers may complete it in place). */
export const processed = (event: ClaimedEvent): Settlement => ({ id: event.id, attempts: event.attempts, status: 'processed' });
