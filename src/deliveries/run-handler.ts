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
  // Made when the handler first reads them: most never log or look at the signal, and each costs per event.
  let handlerLog: Logger | undefined;
  let controller: AbortController | undefined;
  const ctx: HandlerContext = {
    db: q,
    batch,
    event,
    clock: deps.clock,
    handler: handler.name,
    steps,
    get log() {
      return (handlerLog ??= deps.log.child({ ...eventFields(event), handler: handler.name }));
    },
    get signal() {
      return (controller ??= new AbortController()).signal;
    },
  };
  const running = handler.run(ctx);
  try {
    await withDeadline(running, timeoutMs, () => new HandlerTimeout(`The handler did not finish within ${timeoutMs} ms.`));
    if (steps?.suspendedUntil !== undefined) throw new DeliverySuspended(steps.suspendedUntil);
    if (ctx.stepsRefused) throw new StepsNeedOwnRun();
  } catch (error) {
    if (steps?.suspendedUntil !== undefined) throw new DeliverySuspended(steps.suspendedUntil);
    if (ctx.stepsRefused) throw new StepsNeedOwnRun();
    if (!(error instanceof HandlerTimeout)) throw error;
    (controller ??= new AbortController()).abort(error); // a signal read after this is aborted too
    const ended = await withDeadline(
      running.then(
        () => true,
        () => true,
      ),
      deps.abortGraceMs,
      () => new Error('still running'),
    ).catch(() => false);
    if (!ended) ctx.log.error({ graceMs: deps.abortGraceMs }, 'handler ignored its abort signal and is still running; its retry may overlap it');
    throw error;
  }
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
