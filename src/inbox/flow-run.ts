import type { Clock } from '../clock.js';
import type { Database } from '../db/database.js';
import type { ClaimedDelivery, ClaimRule } from '../db/flow-claim.js';
import { finishWaitingEvents, settleDeliveries, type DeliveryOutcome } from '../db/flow-settle.js';
import type { ClaimedEvent } from '../db/inbox-queue.js';
import { messageOf } from '../errors.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import { eventFields, runAndFlush, SAVEPOINT, type HandlerRunDeps } from './handler-run.js';
import type { RegisteredHandler } from './handlers/registry.js';
import type { RetryPolicy } from './retry.js';
import { settleFailure } from './settle.js';

/** What running a flow delivery needs (the flow runner's deps). */
export interface FlowRunDeps {
  db: Database;
  clock: Clock;
  log: Logger;
  policy: RetryPolicy;
  random: () => number;
  handlerTimeoutMs: number;
  runDeps: HandlerRunDeps;
  metrics: Metrics;
  onDead?: (event: ClaimedEvent, error: string) => void;
}

/**
 * Run one unit a claim started: a delivery, or a batch (one key's deliveries
 * claimed together, the handler called once with all of them). It waits for
 * its start slot, runs the handler (on PostgreSQL in the transaction that
 * settles it, so writes and outcome commit together; a throw rolls back only
 * the handler's writes), settles every member and finishes their events.
 */
export async function runFlowUnit(deps: FlowRunDeps, handler: RegisteredHandler, rule: ClaimRule, unit: ClaimedDelivery[]): Promise<void> {
  const { db, clock, policy } = deps;
  const first = unit[0]!;
  const wait = first.startAt - clock.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  const dead = new Map<number, string>();
  const events = unit.map((d) => d.event);
  const last = unit[unit.length - 1]!;
  const event: ClaimedEvent = { ...last.event, debouncedIds: last.debouncedIds, batch: rule.batch ? { events, dead } : undefined };
  const startedAt = clock.now();
  const began = performance.now();
  const finish = (error?: unknown) =>
    unit.map((d) => outcome(deps, rule, d, dead.has(d.event.id) ? new DeadMember(dead.get(d.event.id)!) : error, startedAt, began));
  let outcomes: DeliveryOutcome[];
  if (first.attempts > policy.maxAttempts) {
    outcomes = finish(new Error(`Claimed ${first.attempts} times without finishing (the worker crashed or stopped each time). Fix the cause, then replay it.`));
    await db.transaction((tx) => settleDeliveries(tx, rule, outcomes, clock.now()));
  } else if (db.tuning.inTransactionBudgetMs === undefined) {
    outcomes = await db.transaction(async (tx) => {
      await tx.query(SAVEPOINT.take);
      let result: DeliveryOutcome[];
      try {
        await runAndFlush(deps.runDeps, handler, event, tx, deps.handlerTimeoutMs);
        await tx.query(SAVEPOINT.release);
        result = finish();
      } catch (error) {
        await tx.query(SAVEPOINT.rollback);
        result = finish(error);
      }
      await settleDeliveries(tx, rule, result, clock.now());
      return result;
    });
  } else {
    // PGlite's one session cannot be held for a handler: it runs on its own, then the outcome is written.
    try {
      await runAndFlush(deps.runDeps, handler, event, db, deps.handlerTimeoutMs);
      outcomes = finish();
    } catch (error) {
      outcomes = finish(error);
    }
    await db.transaction((tx) => settleDeliveries(tx, rule, outcomes, clock.now()));
  }
  await finishWaitingEvents(
    db,
    unit.map((d) => d.event.id),
    clock.now(),
  );
  for (const [i, o] of outcomes.entries())
    if (o.status === 'dead' || o.status === 'parked') deps.onDead?.(unit[i]!.event, `${rule.handler} ${o.status}: ${o.error ?? ''}`);
}

/** A batch member its handler sent to dead (`ctx.dead`): dead at once, whatever the batch does. */
class DeadMember extends Error {
  override name = 'MalformedPayloadError';
}

/** A run's outcome for one delivery: processed; waiting again after the backoff; or dead (parked, for an ordered handler). */
function outcome(deps: FlowRunDeps, rule: ClaimRule, delivery: ClaimedDelivery, error: unknown, startedAt: number, began: number): DeliveryOutcome {
  const base = {
    id: delivery.id,
    eventId: delivery.event.id,
    flowKey: delivery.flowKey,
    attempts: delivery.attempts,
    startedAt,
    durationMs: performance.now() - began,
  };
  if (error === undefined) return { ...base, status: 'processed' };
  const settled = settleFailure({ ...delivery.event, attempts: delivery.attempts }, error, deps.policy, deps.clock.now(), deps.random);
  const message = 'error' in settled ? settled.error : messageOf(error);
  const terminal = settled.status !== 'failed';
  deps.log[terminal ? 'error' : 'warn'](
    { ...eventFields(delivery.event), handler: rule.handler, attempts: delivery.attempts, err: { message } },
    terminal ? `delivery ${rule.ordered ? 'parked' : 'dead'}` : 'delivery failed',
  );
  if (settled.status === 'failed') return { ...base, status: 'waiting', error: message, runAfter: settled.nextAttemptAt.getTime() };
  return { ...base, status: rule.ordered ? 'parked' : 'dead', error: message };
}
