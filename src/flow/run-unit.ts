import { MalformedPayloadError } from '../api/malformed-payload.js';
import type { Clock } from '../clock.js';
import type { Database, Queryable } from '../db/database.js';
import type { ClaimedDelivery, ClaimedEvent, DeliveryOutcome } from '../deliveries/claimed.js';
import { eventFields, runAndFlush, SAVEPOINT, type HandlerRunDeps } from '../deliveries/run-handler.js';
import type { RegisteredHandler } from '../deliveries/registry.js';
import type { RetryPolicy } from '../deliveries/retry.js';
import { settleDeliveries } from '../deliveries/settle-sql.js';
import { settleFailure, settleOverClaimed, settleProcessed } from '../deliveries/outcome.js';
import type { Logger } from '../log.js';
import { lockKeys, refreshKeys } from './key-state.js';
import type { ClaimRule } from './rule.js';
import { DeliverySteps } from '../steps/delivery-steps.js';
import { StepError, StepsNeedOwnRun } from '../steps/step-signals.js';

/** What running a flow unit needs (the flow runner's deps). */
export interface FlowRunDeps {
  db: Database;
  clock: Clock;
  log: Logger;
  policy: RetryPolicy;
  random: () => number;
  handlerTimeoutMs: number;
  runDeps: HandlerRunDeps;
  onDead?: (event: ClaimedEvent, error: string) => void;
}

/**
 * Run one unit a claim started: a delivery, or a batch (one key's deliveries
 * claimed together, the handler called once with all of them). It waits for
 * its start slot, runs the handler (on PostgreSQL in the transaction that
 * settles it, so writes and outcome commit together; a throw rolls back only
 * the handler's writes; a handler with steps outside it, each step's end
 * committing as it ends) and settles every member with its key's state.
 */
export async function runFlowUnit(deps: FlowRunDeps, handler: RegisteredHandler, rule: ClaimRule, unit: ClaimedDelivery[]): Promise<DeliveryOutcome[]> {
  const { db, clock } = deps;
  const first = unit[0]!;
  const wait = first.startAt - clock.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  const dead = new Map<number, string>();
  const last = unit[unit.length - 1]!;
  const event: ClaimedEvent = { ...last.event, batch: rule.batch ? { events: unit.map((d) => d.event), dead } : undefined };
  const startedAt = clock.now();
  const began = performance.now();
  // A batch member its handler sent to dead (`ctx.dead`) is dead at once, whatever the batch does.
  const finish = (error?: unknown) =>
    unit.map((d) => outcomeOf(deps, rule, d, dead.has(d.event.id) ? new MalformedPayloadError(dead.get(d.event.id)!) : error, startedAt, began));
  const over = settleOverClaimed(first, deps.policy, rule.ordered, startedAt);
  let outcomes: DeliveryOutcome[];
  if (over) {
    outcomes = unit.map((d) => ({ ...over, id: d.id, eventId: d.event.id, attempts: d.attempts }));
    await db.transaction((tx) => settleUnit(tx, rule, unit, outcomes, clock.now()));
  } else if (db.tuning.inTransactionBudgetMs === undefined && !handler.usesSteps) {
    outcomes = await runInSettleTransaction(deps, handler, rule, unit, event, finish);
    if (outcomes.length === 0) {
      handler.usesSteps = true; // it called a step: rolled back, run on its own
      outcomes = await runOutside(deps, handler, rule, unit, event, finish);
    }
  } else outcomes = await runOutside(deps, handler, rule, unit, event, finish);
  for (const [i, o] of outcomes.entries())
    if (o.status === 'dead' || o.status === 'parked') deps.onDead?.(unit[i]!.event, `${rule.handler} ${o.status}: ${o.error ?? ''}`);
  return outcomes;
}

type Finish = (error?: unknown) => DeliveryOutcome[];

/** Run and settle in one transaction (PostgreSQL); no outcomes when the handler called a step (rolled back: it runs outside). */
async function runInSettleTransaction(
  deps: FlowRunDeps,
  handler: RegisteredHandler,
  rule: ClaimRule,
  unit: ClaimedDelivery[],
  event: ClaimedEvent,
  finish: Finish,
): Promise<DeliveryOutcome[]> {
  return deps.db
    .transaction(async (tx) => {
      await tx.query(SAVEPOINT.take);
      let result: DeliveryOutcome[];
      try {
        await runAndFlush(deps.runDeps, handler, event, tx, deps.handlerTimeoutMs);
        await tx.query(SAVEPOINT.release);
        result = finish();
      } catch (error) {
        if (error instanceof StepsNeedOwnRun) throw error;
        await tx.query(SAVEPOINT.rollback);
        result = finish(error);
      }
      await settleUnit(tx, rule, unit, result, deps.clock.now());
      return result;
    })
    .catch((error: unknown) => (error instanceof StepsNeedOwnRun ? [] : Promise.reject(error)));
}

/**
 * Run on the database itself, then write the outcome: PGlite's one session
 * cannot be held for a handler, and a handler's steps commit as they end. A
 * batch has no steps: they are one delivery's.
 */
async function runOutside(deps: FlowRunDeps, handler: RegisteredHandler, rule: ClaimRule, unit: ClaimedDelivery[], event: ClaimedEvent, finish: Finish) {
  const { db, clock } = deps;
  const steps = rule.batch ? undefined : new DeliverySteps({ db, clock, fence: { deliveryId: unit[0]!.id, attempts: unit[0]!.attempts } });
  let outcomes: DeliveryOutcome[];
  try {
    await runAndFlush(deps.runDeps, handler, event, db, deps.handlerTimeoutMs, steps);
    outcomes = finish();
  } catch (error) {
    outcomes = finish(
      error instanceof StepsNeedOwnRun
        ? new StepError(
            'A batch handler cannot use steps (ctx.step, ctx.sleep, ctx.waitForEvent): its run covers many deliveries. Drop `batch`, or the steps.',
            { terminal: true },
          )
        : error,
    );
  }
  await db.transaction((tx) => settleUnit(tx, rule, unit, outcomes, clock.now()));
  return outcomes;
}

/** Settle a unit's deliveries and bring its keys up to date; keys are locked first, in key order, as every writer of key rows does. */
async function settleUnit(tx: Queryable, rule: ClaimRule, unit: readonly ClaimedDelivery[], outcomes: readonly DeliveryOutcome[], now: number): Promise<void> {
  const keys = [...new Set(unit.map((d) => d.flowKey ?? ''))];
  await lockKeys(tx, rule.handler, keys, now);
  await settleDeliveries(tx, outcomes, now);
  await refreshKeys(tx, rule, keys, now);
}

/** A run's outcome for one delivery, logged when it failed. */
function outcomeOf(deps: FlowRunDeps, rule: ClaimRule, delivery: ClaimedDelivery, error: unknown, startedAt: number, began: number): DeliveryOutcome {
  const timing = { startedAt, durationMs: performance.now() - began };
  if (error === undefined) return settleProcessed(delivery, timing);
  const outcome = settleFailure(delivery, error, { policy: deps.policy, now: deps.clock.now(), random: deps.random, ordered: rule.ordered, timing });
  deps.log[outcome.status === 'pending' ? 'debug' : outcome.status === 'failed' ? 'warn' : 'error'](
    { ...eventFields(delivery.event), handler: rule.handler, attempts: delivery.attempts, err: { message: outcome.error, stack: outcome.stack } },
    `delivery ${outcome.status}`,
  );
  return outcome;
}
