import type { Clock } from '../clock.js';
import type { Queryable } from '../db/database.js';
import { claimDueEvents, releaseClaims, type ClaimedEvent, type Settlement } from '../db/inbox-queue.js';
import { settleEvents } from '../db/inbox-settle.js';
import { WriteBatch } from '../db/write-batch.js';
import { BATCH_ABANDONED, type BatchDeps, type BatchResult, type BatchState } from './batch-deps.js';
import { BatchMetrics } from './batch-metrics.js';
import { reportSettled } from './batch-report.js';
import { startLeaseHeartbeat } from './lease-heartbeat.js';
import { messageOf } from '../errors.js';
import type { Logger } from '../log.js';
import { outcome, pendingHandlers, processed, settleHandlers, settlesApart, type HandlerOutcome } from './deliveries.js';
import { eventFields, HandlerTimeout, runAndFlush, runHandler, SAVEPOINT } from './handler-run.js';
import type { RegisteredHandler } from './handlers/registry.js';
import { settleFailure, settleWithoutHandler } from './settle.js';

const typeKey = (event: ClaimedEvent) => `${event.source}\u0000${event.type}`;

/**
 * One claim of up to `batchSize` due events, processed and settled. Their
 * handlers run one after another in ONE transaction, with their deferred
 * writes (`ctx.batch`) flushed and the outcomes settled in it: one commit per
 * batch, and state change and outcome commit together. A handler that throws
 * without breaking the transaction (a malformed payload) fails only its own
 * event. A failed statement aborts the transaction: it rolls back and the
 * batch falls back to one event at a time, keeping the outcome of the event
 * that broke it. A handler slower than the database's in-transaction budget
 * (PGlite: one session) rolls the batch back and its type runs alone from then on.
 */
export function createBatchRunner(deps: BatchDeps): { run(): Promise<number> } {
  return new BatchRunner(deps);
}

/** The batch runner's state across claims (slow types, metrics) and its steps, as methods: no closure per event. */
class BatchRunner {
  private readonly inTransactionBudgetMs: number;
  /** (source, type) pairs that proved too slow for a shared transaction. */
  private readonly slowTypes = new Set<string>();
  private readonly runDeps: { clock: Clock; log: Logger; abortGraceMs: number };
  private readonly observed: BatchMetrics;
  /** Each claimed event's handlers, found once per claim. */
  private readonly found = new WeakMap<ClaimedEvent, readonly RegisteredHandler[]>();
  private readonly handleAlone = (event: ClaimedEvent) => this.runAlone(event);

  constructor(private readonly deps: BatchDeps) {
    const { db, leaseMs, handlerTimeoutMs } = deps;
    // A database with a budget (PGlite) has one session: no renewal runs while the batch's transaction holds it,
    // so the budget is also at most a third of the lease (with LEASE_SECONDS=1 a 1 s budget let the claim expire
    // and a second worker take the event while its handler still ran). PostgreSQL renews on another connection.
    const budget = db.tuning.inTransactionBudgetMs;
    this.inTransactionBudgetMs = Math.min(handlerTimeoutMs, budget === undefined ? handlerTimeoutMs : Math.min(budget, Math.max(50, Math.floor(leaseMs / 3))));
    this.runDeps = { clock: deps.clock, log: deps.log, abortGraceMs: deps.abortGraceMs };
    this.observed = new BatchMetrics(deps.metrics);
  }

  private failure(event: ClaimedEvent, handler: string, error: unknown): Settlement {
    const settlement = settleFailure(event, error, this.deps.policy, this.deps.clock.now(), this.deps.random);
    const message = settlement.status === 'failed' || settlement.status === 'dead' ? settlement.error : messageOf(error);
    const level = settlement.status === 'dead' ? 'error' : 'warn';
    this.deps.log[level]({ ...eventFields(event), handler, attempts: event.attempts, err: { message } }, `event ${settlement.status}`);
    return settlement;
  }

  private handlersOf(event: ClaimedEvent): readonly RegisteredHandler[] {
    return this.found.get(event) ?? this.deps.handlers.find(event);
  }

  /** One event on its own, each handler's deferred writes in their own transaction: the fallback path and slow types. */
  private async runAlone(event: ClaimedEvent): Promise<Settlement> {
    const { db, clock, handlerTimeoutMs } = this.deps;
    const all = this.handlersOf(event);
    const outcomes: HandlerOutcome[] = [];
    for (const handler of pendingHandlers(event, all)) {
      const started = performance.now();
      const startedAt = clock.now();
      try {
        const flow = this.deps.flow;
        if (flow?.handsOver(handler, event)) {
          outcomes.push(outcome(handler, await db.transaction((tx) => flow.handOver(tx, handler, event)), startedAt, started));
          continue;
        }
        // A project handler gets a transaction of its own where long ones are cheap (PostgreSQL); PGlite's one session cannot hold it.
        if (handler.isolated && db.tuning.inTransactionBudgetMs === undefined)
          await db.transaction((tx) => runAndFlush(this.runDeps, handler, event, tx, handlerTimeoutMs));
        else await runAndFlush(this.runDeps, handler, event, db, handlerTimeoutMs);
        outcomes.push(outcome(handler, processed(event), startedAt, started));
      } catch (error) {
        outcomes.push(outcome(handler, this.failure(event, handler.name, error), startedAt, started));
      }
    }
    const settlement = settleHandlers(event, outcomes, settlesApart(event, all));
    this.observed.observe(event, settlement);
    return settlement;
  }

  /**
   * Run one event's pending handlers inside the batch's transaction. An
   * isolated handler runs in a savepoint: its throw (a failed statement
   * included) rolls back its own writes and settles only it. A shared
   * handler's timeout or broken statement abandons the batch (BATCH_ABANDONED),
   * keeping in `decided` the outcome of a lone handler that caused it.
   */
  private async runEventInBatch(
    event: ClaimedEvent,
    tx: Queryable,
    q: Queryable,
    batch: WriteBatch,
    state: BatchState,
    decided: Settlement[],
  ): Promise<Settlement> {
    const { clock, handlerTimeoutMs } = this.deps;
    const inTransactionBudgetMs = this.inTransactionBudgetMs;
    const all = this.handlersOf(event);
    const pending = pendingHandlers(event, all);
    const apart = settlesApart(event, all);
    const outcomes: HandlerOutcome[] = [];
    for (const handler of pending) {
      const started = performance.now();
      const startedAt = clock.now();
      // The savepoint is taken at an isolated handler's first query: one that never queries costs no round trip.
      let savepoint: Promise<unknown> | undefined;
      const scoped: Queryable = handler.isolated
        ? { query: async (text, params) => (await (savepoint ??= tx.query(SAVEPOINT.take)), q.query(text, params)) }
        : q;
      try {
        const flow = this.deps.flow;
        const handedOver = flow?.handsOver(handler, event) ? await flow.handOver(scoped, handler, event) : undefined;
        if (!handedOver) await runHandler(this.runDeps, handler, event, scoped, batch, inTransactionBudgetMs);
        if (savepoint) await tx.query(SAVEPOINT.release);
        outcomes.push(outcome(handler, handedOver ?? processed(event), startedAt, started));
      } catch (error) {
        if (error instanceof HandlerTimeout && inTransactionBudgetMs < handlerTimeoutMs) {
          this.slowTypes.add(typeKey(event));
          this.deps.log.info(
            { source: event.source, type: event.type, handler: handler.name },
            `handler took over ${inTransactionBudgetMs} ms inside a batch; it runs on its own from now on`,
          );
          throw BATCH_ABANDONED;
        }
        const failed = outcome(handler, this.failure(event, handler.name, error), startedAt, started);
        if (handler.isolated && !(error instanceof HandlerTimeout)) {
          if (savepoint) await tx.query(SAVEPOINT.rollback);
          state.brokenBy = undefined;
        } else if (error instanceof HandlerTimeout || state.brokenBy !== undefined) {
          if (pending.length === 1 && (state.brokenBy === event.id || error instanceof HandlerTimeout)) decided.push(settleHandlers(event, [failed], apart));
          throw BATCH_ABANDONED;
        }
        outcomes.push(failed);
      }
    }
    return settleHandlers(event, outcomes, apart);
  }

  private async runInOneTransaction(events: ClaimedEvent[], fixed: Settlement[]): Promise<BatchResult> {
    const { db, clock } = this.deps;
    if (events.length === 0) return { kind: 'committed', settlements: [...fixed], owned: await settleEvents(db, fixed, clock.now()) };
    const state: BatchState = { brokenBy: undefined, abandoned: false };
    const decided: Settlement[] = [];
    try {
      return await db.transaction(async (tx) => {
        let current = 0;
        const q: Queryable = {
          async query<T>(text: string, params?: unknown[]): Promise<T[]> {
            if (state.abandoned || state.brokenBy !== undefined) throw new Error('The batch transaction was abandoned; the event is retried on its own.');
            try {
              return await tx.query<T>(text, params);
            } catch (error) {
              state.brokenBy ??= current;
              throw error;
            }
          },
        };
        const batch = new WriteBatch();
        const settlements = [...fixed];
        const ran: Array<[ClaimedEvent, Settlement]> = [];
        for (const event of events) {
          current = event.id;
          const settlement = await this.runEventInBatch(event, tx, q, batch, state, decided);
          settlements.push(settlement);
          ran.push([event, settlement]);
        }
        current = -1; // a failing deferred write is no single event's: everything runs on its own
        await batch.flush(q);
        const owned = await settleEvents(tx, settlements, clock.now());
        for (const [event, settlement] of ran) this.observed.observe(event, settlement);
        return { kind: 'committed', settlements, owned } as BatchResult;
      });
    } catch (error) {
      state.abandoned = true; // a handler still running from a timed-out call must not write any more
      if (error !== BATCH_ABANDONED)
        this.deps.log.warn({ err: { message: messageOf(error) } }, 'batch transaction failed; processing its events one at a time');
      return { kind: 'fallback', decided };
    }
  }

  async run(): Promise<number> {
    const { db, clock, log, leaseMs } = this.deps;
    const claims = await claimDueEvents(db, { now: clock.now(), leaseMs, limit: this.deps.batchSize });
    if (claims.length === 0) return 0;
    if (this.deps.isStopping()) {
      await releaseClaims(db, claims);
      return 0;
    }
    const heartbeat = startLeaseHeartbeat(db, claims, { leaseMs, clock, log });
    try {
      await this.processClaims(claims);
    } finally {
      await heartbeat.stop();
    }
    return claims.length;
  }

  /** Decide, run and settle one claim's events (the heartbeat runs meanwhile). */
  private async processClaims(claims: ClaimedEvent[]): Promise<void> {
    const { db, clock } = this.deps;
    const fixed: Settlement[] = [];
    const batched: ClaimedEvent[] = [];
    const alone: ClaimedEvent[] = [];
    for (const event of claims) {
      const all = this.deps.handlers.find(event);
      this.found.set(event, all);
      const settlement = settleWithoutHandler(event, all.length > 0 || event.deliveries !== null, this.deps.policy);
      if (settlement) fixed.push(settlement);
      else (this.slowTypes.has(typeKey(event)) ? alone : batched).push(event);
    }
    let result = await this.runInOneTransaction(batched, alone.length === 0 ? fixed : []);
    if (result.kind === 'fallback') {
      // The shared transaction rolled back: every event whose outcome it did not decide runs on its own.
      const decided = new Set(result.decided.map((s) => s.id));
      const rerun = [...batched.filter((e) => !decided.has(e.id)), ...alone];
      const settlements = [...fixed, ...result.decided, ...(await Promise.all(rerun.map(this.handleAlone)))];
      result = { kind: 'committed', settlements, owned: await settleEvents(db, settlements, clock.now()) };
    } else if (alone.length > 0) {
      const settlements = [...fixed, ...(await Promise.all(alone.map(this.handleAlone)))];
      result.settlements.push(...settlements);
      result.owned.push(...(await settleEvents(db, settlements, clock.now())));
    }
    reportSettled(this.deps, claims, result);
    this.observed.flush();
    const waiting = result.settlements.filter((s) => s.status === 'waiting').map((s) => s.id);
    await this.deps.flow?.afterCommit(
      claims.map((c) => c.id),
      waiting,
    );
  }
}
