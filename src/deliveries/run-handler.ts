import type { Clock } from '../clock.js';
import type { Database, Queryable } from '../db/database.js';
import type { ClaimedEvent } from './claimed.js';
import { WriteBatch } from '../db/write-batch.js';
import { withDeadline } from '../deadline.js';
import type { Logger } from '../log.js';
import type { HandlerContext, RegisteredHandler } from './registry.js';
import type { DeliverySteps } from '../steps/delivery-steps.js';
import { DeliverySuspended, StepsNeedOwnRun } from '../steps/step-signals.js';

/** A handler ran past its time limit. */
export class HandlerTimeout extends Error {}

/** What running one handler needs besides the event. */
export interface HandlerRunDeps {
  clock: Clock;
  log: Logger;
  /** How long an aborted handler is waited for (its lease still renewed) before the event is settled anyway. */
  abortGraceMs: number;
}

/** A savepoint around each isolated handler's queries: its throw rolls back its own writes only. */
export const SAVEPOINT = {
  take: 'SAVEPOINT hookrun_handler',
  release: 'RELEASE SAVEPOINT hookrun_handler',
  rollback: 'ROLLBACK TO SAVEPOINT hookrun_handler',
} as const;

/** The fields every log line about an event carries. */
export const eventFields = (e: ClaimedEvent) => ({ eventId: e.id, source: e.source, key: e.key, type: e.type });

/**
 * A handler started and not yet waited for: its context and its promise. The
 * batch starts one, and may hand it off to finish outside the batch's
 * transaction (inbox/batch.ts) before waiting for it with `awaitHandler`.
 */
export class StartedHandler {
  readonly running: Promise<void>;
  /** The handler's logger and abort controller, made when first read: most never log or look at the signal, and each costs per event. */
  private readonly lazy: { log?: Logger; controller?: AbortController } = {};
  readonly ctx: HandlerContext;

  constructor(
    private readonly deps: HandlerRunDeps,
    handler: RegisteredHandler,
    event: ClaimedEvent,
    q: Queryable,
    batch: WriteBatch,
    readonly steps?: DeliverySteps,
  ) {
    const lazy = this.lazy;
    this.ctx = {
      db: q,
      batch,
      event,
      clock: deps.clock,
      handler: handler.name,
      steps,
      get log() {
        return (lazy.log ??= deps.log.child({ ...eventFields(event), handler: handler.name }));
      },
      get signal() {
        return (lazy.controller ??= new AbortController()).signal;
      },
    };
    this.running = handler.run(this.ctx);
  }

  /** Whether it ended (either way) within `ms`. */
  endsWithin(ms: number): Promise<boolean> {
    const ended = this.running.then(
      () => true,
      () => true,
    );
    return withDeadline(ended, ms, () => new Error('still running')).catch(() => false);
  }

  /** Abort its signal (past its time limit); a signal read after this is aborted too. */
  abort(reason: unknown): void {
    (this.lazy.controller ??= new AbortController()).abort(reason);
  }

  /** Wait for it up to `timeoutMs` more, with {@link runHandler}'s rules. */
  async wait(timeoutMs: number, limitMs: number = timeoutMs): Promise<void> {
    const { steps, ctx } = this;
    try {
      await withDeadline(this.running, timeoutMs, () => new HandlerTimeout(`The handler did not finish within ${limitMs} ms.`));
      if (steps?.suspendedUntil !== undefined) throw new DeliverySuspended(steps.suspendedUntil);
      if (ctx.stepsRefused) throw new StepsNeedOwnRun();
    } catch (error) {
      if (steps?.suspendedUntil !== undefined) throw new DeliverySuspended(steps.suspendedUntil);
      if (ctx.stepsRefused) throw new StepsNeedOwnRun();
      if (!(error instanceof HandlerTimeout)) throw error;
      this.abort(error);
      if (!(await this.endsWithin(this.deps.abortGraceMs)))
        ctx.log.error({ graceMs: this.deps.abortGraceMs }, 'handler ignored its abort signal and is still running; its retry may overlap it');
      throw error;
    }
  }
}

/**
 * Run one handler on `event` over `q` within `timeoutMs`; its deferred writes
 * go to `batch`. Past the limit its `signal` aborts, and the handler is
 * waited for up to `abortGraceMs` more (the heartbeat keeps its claim), so its
 * retry never runs beside it unless it ignores the signal. With `steps`, a
 * sleep or wait it called ends the attempt (DeliverySuspended) even when the
 * handler caught that signal.
 */
export async function runHandler(
  deps: HandlerRunDeps,
  handler: RegisteredHandler,
  event: ClaimedEvent,
  q: Queryable,
  batch: WriteBatch,
  timeoutMs: number,
  steps?: DeliverySteps,
): Promise<void> {
  await new StartedHandler(deps, handler, event, q, batch, steps).wait(timeoutMs);
}

/** One handler on `q`, then its deferred writes (in a transaction of their own unless `q` is one): the one-at-a-time path. */
export async function runAndFlush(
  deps: HandlerRunDeps,
  handler: RegisteredHandler,
  event: ClaimedEvent,
  q: Database | Queryable,
  timeoutMs: number,
  steps?: DeliverySteps,
): Promise<void> {
  const batch = new WriteBatch();
  await runHandler(deps, handler, event, q, batch, timeoutMs, steps);
  await ('transaction' in q ? q.transaction((tx) => batch.flush(tx)) : batch.flush(q));
}
