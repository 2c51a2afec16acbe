import type { Queryable } from '../db/database.js';
import type { ClaimedDelivery } from '../deliveries/claimed.js';
import type { RegisteredHandler } from '../deliveries/registry.js';
import { eventFields, type HandlerRunDeps, type StartedHandler } from '../deliveries/run-handler.js';
import { runOnItsOwn } from '../deliveries/run-alone.js';
import { settleFailure, settleProcessed } from '../deliveries/outcome.js';
import { settleDeliveries } from '../deliveries/settle-sql.js';
import type { BatchDeps, BatchState, Ran } from './batch-deps.js';
import { StepsNeedOwnRun } from '../steps/step-signals.js';

/** A delivery whose handler this instance does not have (renamed or removed since it was planned): it fails, and waits for it. */
export const noHandlerError = (delivery: ClaimedDelivery) =>
  new Error(`No handler "${delivery.handler}" takes ${delivery.event.source} ${delivery.event.type} on this instance.`);

/**
 * One delivery's attempt and its outcome, outside the shared transaction of a
 * batch: the handler it names, how a throw or a success is settled and
 * logged, and the one-delivery run of the fallback, the slow types and the
 * paced passes (paced.ts).
 */
export class DeliveryAttempts {
  constructor(
    readonly deps: BatchDeps,
    readonly runDeps: HandlerRunDeps,
  ) {}

  /** The registered handler a delivery names (by its event's source and type: a name may run a different function per type). */
  handlerOf(delivery: ClaimedDelivery): RegisteredHandler | undefined {
    return this.deps.handlers.find(delivery.event).find((h) => h.name === delivery.handler);
  }

  /** A failed attempt's outcome (retry, park or dead), logged with its stack. */
  failure(delivery: ClaimedDelivery, handler: RegisteredHandler | undefined, error: unknown, startedAt: number, began: number): Ran {
    const ordered = delivery.flowKey !== null && (handler?.flow === undefined || handler.flow.ordered);
    const { policy, random, clock } = this.deps;
    const outcome = settleFailure(delivery, error, { policy, random, now: clock.now(), ordered, timing: { startedAt, durationMs: performance.now() - began } });
    const level = outcome.status === 'pending' ? 'debug' : outcome.status === 'failed' ? 'warn' : 'error';
    this.deps.log[level](
      { ...eventFields(delivery.event), handler: delivery.handler, attempts: delivery.attempts, err: { message: outcome.error, stack: outcome.stack } },
      `delivery ${outcome.status}`,
    );
    return { delivery, outcome };
  }

  /** A processed attempt's outcome, with its timing. */
  processed(delivery: ClaimedDelivery, startedAt: number, began: number): Ran {
    return { delivery, outcome: settleProcessed(delivery, { startedAt, durationMs: performance.now() - began }) };
  }

  /** One delivery on its own, its deferred writes in their own transaction: the fallback path and slow types. */
  async runAlone(delivery: ClaimedDelivery): Promise<Ran> {
    const { db, clock, handlerTimeoutMs } = this.deps;
    const handler = this.handlerOf(delivery);
    const began = performance.now();
    const startedAt = clock.now();
    try {
      if (!handler) throw noHandlerError(delivery);
      await runOnItsOwn(this.runDeps, handler, delivery, db, handlerTimeoutMs);
      return this.processed(delivery, startedAt, began);
    } catch (error) {
      return this.failure(delivery, handler, error, startedAt, began);
    }
  }

  /** A handler handed off by its batch: its outcome once it ends, within what is left of its time limit after `spentMs`. */
  async finishOutside(started: StartedHandler, delivery: ClaimedDelivery, at: { startedAt: number; began: number; spentMs: number }): Promise<Ran> {
    const { handlerTimeoutMs } = this.deps;
    try {
      await started.wait(handlerTimeoutMs - at.spentMs, handlerTimeoutMs);
      return this.processed(delivery, at.startedAt, at.began);
    } catch (error) {
      const handler = this.handlerOf(delivery);
      if (error instanceof StepsNeedOwnRun && handler) {
        handler.usesSteps = true; // it reached a step: its steps commit as they end, so it runs on its own
        return this.runAlone(delivery);
      }
      return this.failure(delivery, handler, error, at.startedAt, at.began);
    }
  }

  /** A handed-off handler whose batch then rolled back: what it wrote before the hand-off is gone, so it runs again. */
  async rolledBackUnder(handedOff: NonNullable<BatchState['handedOff']>): Promise<Ran> {
    const ran = await handedOff.finish;
    if (ran.outcome.status !== 'processed') return ran;
    const error = new Error('Its batch rolled back after the handler went on outside it, taking its first writes with it; it runs again.');
    return this.failure(handedOff.delivery, this.handlerOf(handedOff.delivery), error, handedOff.startedAt, handedOff.began);
  }

  /** Settle outcomes over `q` (fenced by each claim's attempt); the ids this worker still owned. */
  async settle(q: Queryable, ran: readonly Ran[]): Promise<Set<number>> {
    const settled = await settleDeliveries(
      q,
      ran.map((r) => r.outcome),
      this.deps.clock.now(),
    );
    return new Set(settled.map((s) => s.id));
  }
}
