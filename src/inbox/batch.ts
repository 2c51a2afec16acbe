import type { Clock } from '../clock.js';
import type { Queryable } from '../db/database.js';
import { WriteBatch } from '../db/write-batch.js';
import { messageOf } from '../errors.js';
import type { Logger } from '../log.js';
import { BATCH_ABANDONED, type BatchDeps, type BatchResult, type BatchState, type Ran } from './batch-deps.js';
import { OutcomeMetrics } from '../deliveries/outcome-metrics.js';
import { reportSettled } from './batch-report.js';
import { claimInbox } from './claim.js';
import type { ClaimedDelivery } from '../deliveries/claimed.js';
import { HandlerTimeout, SAVEPOINT, StartedHandler } from '../deliveries/run-handler.js';
import { startLeaseHeartbeat } from '../deliveries/lease-heartbeat.js';
import { releaseClaims } from '../deliveries/leases-sql.js';
import { settleOverClaimed } from '../deliveries/outcome.js';
import { DeliveryAttempts, noHandlerError } from './attempt.js';
import { DeliveryPace, runPaced } from './paced.js';
import { StepsNeedOwnRun } from '../steps/step-signals.js';

const typeKey = (d: ClaimedDelivery) => `${d.event.source}\u0000${d.event.type}`;

/**
 * One claim of up to `batchSize` deliveries of handlers that run inline,
 * processed and settled. Their handlers run one after another in ONE
 * transaction, with their deferred writes (`ctx.batch`) flushed and the
 * outcomes settled in it: one commit per batch, and state change and outcome
 * commit together. A handler that throws without breaking the transaction (a
 * malformed payload) fails only its own delivery. A failed statement aborts
 * the transaction: it rolls back and the batch falls back to one delivery at
 * a time, keeping the outcome of the delivery that broke it. A handler slower
 * than the database's in-transaction budget (PGlite: one session) rolls the
 * batch back and its type runs alone from then on.
 */
export function createBatchRunner(deps: BatchDeps): { run(finishBy?: number): Promise<number> } {
  return new BatchRunner(deps);
}

/** The batch runner's state across claims (slow types, metrics) and its steps, as methods: no closure per delivery. */
class BatchRunner {
  private readonly inTransactionBudgetMs: number;
  /** (source, type) pairs that proved too slow for a shared transaction. */
  private readonly slowTypes = new Set<string>();
  private readonly runDeps: { clock: Clock; log: Logger; abortGraceMs: number };
  private readonly observed: OutcomeMetrics;
  private readonly handleAlone = (delivery: ClaimedDelivery) => this.attempts.runAlone(delivery);
  private readonly attempts: DeliveryAttempts;
  private readonly pace = new DeliveryPace();

  constructor(private readonly deps: BatchDeps) {
    const { db, leaseMs, handlerTimeoutMs } = deps;
    // A database with a budget (PGlite) has one session: no renewal runs while the batch's transaction holds it,
    // so the budget is also at most a third of the lease (with LEASE_SECONDS=1 a 1 s budget let the claim expire
    // and a second worker take the delivery while its handler still ran). PostgreSQL renews on another connection.
    const budget = db.tuning.inTransactionBudgetMs;
    this.inTransactionBudgetMs = Math.min(handlerTimeoutMs, budget === undefined ? handlerTimeoutMs : Math.min(budget, Math.max(50, Math.floor(leaseMs / 3))));
    this.runDeps = { clock: deps.clock, log: deps.log, abortGraceMs: deps.abortGraceMs };
    this.observed = new OutcomeMetrics(deps.metrics);
    this.attempts = new DeliveryAttempts(deps, this.runDeps);
  }

  /**
   * Run one delivery inside the batch's transaction. An isolated handler runs
   * in a savepoint: its throw (a failed statement included) rolls back its own
   * writes only. A shared handler's timeout or broken statement abandons the
   * batch (BATCH_ABANDONED), keeping in `decided` the outcome of the delivery that caused it.
   */
  private async runInBatch(
    delivery: ClaimedDelivery,
    tx: Queryable,
    q: Queryable,
    batch: WriteBatch,
    state: BatchState,
    decided: Ran[],
  ): Promise<Ran | undefined> {
    const { clock, handlerTimeoutMs } = this.deps;
    const inTransactionBudgetMs = this.inTransactionBudgetMs;
    const handler = this.attempts.handlerOf(delivery);
    const began = performance.now();
    const startedAt = clock.now();
    if (!handler) return this.attempts.failure(delivery, handler, noHandlerError(delivery), startedAt, began);
    // The savepoint is taken at an isolated handler's first query: one that never queries costs no round trip.
    // Handed off (below), its queries go to the database itself, each committing on its own.
    let savepoint: Promise<unknown> | undefined;
    let handedOff = false;
    const { db } = this.deps;
    const scoped: Queryable = handler.isolated
      ? {
          query: async (text, params) => {
            if (handedOff) return db.query(text, params);
            await (savepoint ??= tx.query(SAVEPOINT.take));
            return handedOff ? db.query(text, params) : q.query(text, params);
          },
        }
      : q;
    // A project handler may outlast what the database lets a transaction hold (PGlite: its one session): then it is handed off, never cut.
    const mayHandOff = handler.isolated && inTransactionBudgetMs < handlerTimeoutMs;
    try {
      const started = new StartedHandler(this.runDeps, handler, delivery.event, scoped, batch);
      if (mayHandOff && !(await started.endsWithin(inTransactionBudgetMs))) {
        if (savepoint) await savepoint.then(() => tx.query(SAVEPOINT.release)); // what it wrote so far commits with the batch
        handedOff = true;
        this.slowTypes.add(typeKey(delivery));
        this.deps.log.info(
          { source: delivery.event.source, type: delivery.event.type, handler: handler.name },
          `handler took over ${inTransactionBudgetMs} ms inside a batch; it finishes outside it, and runs on its own from now on`,
        );
        state.handedOff = {
          delivery,
          finish: this.attempts.finishOutside(started, delivery, { startedAt, began, spentMs: inTransactionBudgetMs }),
          startedAt,
          began,
        };
        return undefined;
      }
      await started.wait(mayHandOff ? handlerTimeoutMs : inTransactionBudgetMs);
      if (savepoint) await tx.query(SAVEPOINT.release);
      return this.attempts.processed(delivery, startedAt, began);
    } catch (error) {
      if (error instanceof StepsNeedOwnRun) {
        this.slowTypes.add(typeKey(delivery)); // its steps commit as they end: it runs on its own from now on
        throw BATCH_ABANDONED;
      }
      if (error instanceof HandlerTimeout && inTransactionBudgetMs < handlerTimeoutMs) {
        this.slowTypes.add(typeKey(delivery));
        this.deps.log.info(
          { source: delivery.event.source, type: delivery.event.type, handler: handler.name },
          `handler took over ${inTransactionBudgetMs} ms inside a batch; it runs on its own from now on`,
        );
        throw BATCH_ABANDONED;
      }
      const failed = this.attempts.failure(delivery, handler, error, startedAt, began);
      if (handler.isolated && !(error instanceof HandlerTimeout)) {
        if (savepoint) await tx.query(SAVEPOINT.rollback);
        state.brokenBy = undefined;
      } else if (error instanceof HandlerTimeout || state.brokenBy !== undefined) {
        if (state.brokenBy === delivery.id || error instanceof HandlerTimeout) decided.push(failed);
        throw BATCH_ABANDONED;
      }
      return failed;
    }
  }

  private async runInOneTransaction(deliveries: ClaimedDelivery[], fixed: Ran[]): Promise<BatchResult> {
    const { db } = this.deps;
    if (deliveries.length === 0) return { kind: 'committed', ran: [...fixed], owned: await this.attempts.settle(db, fixed) };
    const state: BatchState = { brokenBy: undefined, abandoned: false };
    const decided: Ran[] = [];
    try {
      return await db.transaction(async (tx) => {
        let current = 0;
        const q: Queryable = {
          async query<T>(text: string, params?: unknown[]): Promise<T[]> {
            if (state.abandoned || state.brokenBy !== undefined) throw new Error('The batch transaction was abandoned; the delivery is retried on its own.');
            try {
              return await tx.query<T>(text, params);
            } catch (error) {
              state.brokenBy ??= current;
              throw error;
            }
          },
        };
        const batch = new WriteBatch();
        const ran = [...fixed];
        for (const [i, delivery] of deliveries.entries()) {
          current = delivery.id;
          const r = await this.runInBatch(delivery, tx, q, batch, state, decided);
          if (r) ran.push(r);
          else {
            // Handed off: the batch commits now with what ran; the rest go back unstarted for the next claim.
            await releaseClaims(tx, deliveries.slice(i + 1));
            break;
          }
        }
        current = -1; // a failing deferred write is no single delivery's: everything runs on its own
        await batch.flush(q);
        const owned = await this.attempts.settle(tx, ran);
        return { kind: 'committed', ran, owned, handedOff: state.handedOff } as BatchResult;
      });
    } catch (error) {
      state.abandoned = true; // a handler still running from a timed-out call must not write any more
      if (error !== BATCH_ABANDONED)
        this.deps.log.warn({ err: { message: messageOf(error) } }, 'batch transaction failed; processing its deliveries one at a time');
      return { kind: 'fallback', decided, handedOff: state.handedOff };
    }
  }

  /** One claim; with `finishBy` (a performance.now() time), sized to the time left and committed one delivery at a time (paced.ts). */
  async run(finishBy?: number): Promise<number> {
    const { db, clock, log, leaseMs, batchSize } = this.deps;
    const { inline, paused } = this.deps.lanes();
    const limit = finishBy === undefined ? batchSize : this.pace.claimSize(finishBy - performance.now(), batchSize);
    const claim = await claimInbox(db, { handlers: this.deps.handlers, inline, paused, now: clock.now(), leaseMs, limit });
    if (claim.flowWork) this.deps.onFlowWork?.();
    for (const event of claim.ignored) this.deps.metrics.eventsProcessed.inc({ source: event.source, outcome: 'ignored' });
    const claims = claim.deliveries;
    if (claims.length === 0) return claim.planned;
    if (this.deps.isStopping()) {
      await releaseClaims(db, claims);
      return 0;
    }
    const heartbeat = startLeaseHeartbeat(db, claims, { leaseMs, clock, log });
    try {
      await this.processClaims(
        claims.sort((a, b) => a.event.id - b.event.id || a.id - b.id),
        finishBy,
      );
    } finally {
      await heartbeat.stop();
    }
    return Math.max(claims.length, claim.planned);
  }

  /** Decide, run and settle one claim's deliveries (the heartbeat runs meanwhile). */
  private async processClaims(claims: ClaimedDelivery[], finishBy: number | undefined): Promise<void> {
    const { db, policy, clock } = this.deps;
    const fixed: Ran[] = [];
    const batched: ClaimedDelivery[] = [];
    const alone: ClaimedDelivery[] = [];
    for (const delivery of claims) {
      const over = settleOverClaimed(delivery, policy, delivery.flowKey !== null, clock.now());
      if (over) fixed.push({ delivery, outcome: over });
      else (this.slowTypes.has(typeKey(delivery)) || this.attempts.handlerOf(delivery)?.usesSteps ? alone : batched).push(delivery);
    }
    let result: BatchResult =
      finishBy === undefined
        ? await this.runInOneTransaction(batched, alone.length === 0 ? fixed : [])
        : await runPaced(this.attempts, this.pace, fixed, [...batched, ...alone], finishBy);
    const handedOff = result.handedOff;
    if (result.kind === 'fallback') {
      // The shared transaction rolled back: every delivery whose outcome it did not decide runs on its own
      // (the handed-off one, whose first writes went with it, is retried).
      const decided = new Set([...result.decided.map((r) => r.delivery.id), ...(handedOff ? [handedOff.delivery.id] : [])]);
      const rerun = [...batched.filter((d) => !decided.has(d.id)), ...alone];
      const lost = handedOff ? [await this.attempts.rolledBackUnder(handedOff)] : [];
      const ran = [...fixed, ...result.decided, ...lost, ...(await Promise.all(rerun.map(this.handleAlone)))];
      result = { kind: 'committed', ran, owned: await db.transaction((tx) => this.attempts.settle(tx, ran)) };
    } else if ((alone.length > 0 || handedOff) && finishBy === undefined) {
      const ran = [...(alone.length > 0 ? fixed : []), ...(await Promise.all([...alone.map(this.handleAlone), ...(handedOff ? [handedOff.finish] : [])]))];
      const owned = await db.transaction((tx) => this.attempts.settle(tx, ran));
      result.ran.push(...ran);
      for (const id of owned) result.owned.add(id);
    }
    for (const r of result.ran) if (result.owned.has(r.delivery.id)) this.observed.observe(r.delivery, r.outcome);
    reportSettled(this.deps, result.ran, result.owned);
    this.observed.flush();
  }
}
