import type { Clock } from '../clock.js';
import type { Database, Queryable } from '../db/database.js';
import { claimDeliveries, type ClaimedDelivery, type ClaimRule } from '../db/flow-claim.js';
import { handOver } from '../db/flow-handoff.js';
import { finishWaitingEvents, settleDeliveries, type DeliveryOutcome } from '../db/flow-settle.js';
import { pausedHandlers } from '../db/handler-controls.js';
import type { ClaimedEvent, Settlement } from '../db/inbox-queue.js';
import { messageOf } from '../errors.js';
import { flowKeyOf, priorityMsOf } from '../flow/keys.js';
import type { FlowPlan } from '../flow/options.js';
import type { Logger } from '../log.js';
import { eventFields, runAndFlush, SAVEPOINT, type HandlerRunDeps } from './handler-run.js';
import type { HandlerRegistry, RegisteredHandler } from './handlers/registry.js';
import type { RetryPolicy } from './retry.js';
import { settleFailure } from './settle.js';

/** What the flow claimer needs: the worker's database, clock, policy and limits. */
export interface FlowRunnerDeps {
  db: Database;
  handlers: HandlerRegistry;
  clock: Clock;
  log: Logger;
  policy: RetryPolicy;
  random: () => number;
  leaseMs: number;
  handlerTimeoutMs: number;
  abortGraceMs: number;
  /** How often paused handlers are read, and idle handlers looked at again. */
  pollIntervalMs: number;
  /** How far ahead rate-limited starts are claimed (each then waits for its slot); 0 with an injected clock. */
  horizonMs: number;
  /** Deliveries of one handler this instance runs at once. */
  localLimit: number;
  /** A delivery ended: claim again now (another may start). */
  wake(): void;
  onDead?: (event: ClaimedEvent, error: string) => void;
}

/** The claim rule a handler's flow options make. */
export function claimRuleOf(name: string, plan: FlowPlan | undefined): ClaimRule {
  return {
    handler: name,
    keyLimit: plan?.ordered ? 1 : plan?.concurrency?.perKey ? plan.concurrency.limit : null,
    ordered: plan?.ordered ?? false,
    globalLimit: plan?.concurrency && !plan.concurrency.perKey ? plan.concurrency.limit : null,
    rate: plan?.rate ? { intervalMs: plan.rate.periodMs / plan.rate.limit, perKey: plan.rate.perKey } : undefined,
  };
}

interface Entry {
  handler: RegisteredHandler;
  rule: ClaimRule;
  inFlight: number;
  /** Something changed here (a hand-over, a delivery ended): claim at the next round. */
  dirty: boolean;
  nextAt?: number;
  lastClaim: number;
}

/**
 * Flow control's side of the worker: hands events to flow-controlled (and
 * paused) handlers inside the inbox batch, claims their deliveries as the
 * limits allow, runs each (its writes and outcome in one transaction on
 * PostgreSQL) and finishes the events whose deliveries have all ended.
 */
export class FlowRunner {
  private readonly entries = new Map<string, Entry>();
  private paused = new Set<string>();
  private lastRefresh = -Infinity;
  private folded: number[] = [];
  private readonly running = new Set<Promise<void>>();
  private readonly runDeps: HandlerRunDeps;

  constructor(private readonly deps: FlowRunnerDeps) {
    this.runDeps = { clock: deps.clock, log: deps.log, abortGraceMs: deps.abortGraceMs };
    for (const handler of deps.handlers.flowControlled()) this.entry(handler);
  }

  private entry(handler: RegisteredHandler): Entry {
    let entry = this.entries.get(handler.name);
    if (!entry)
      this.entries.set(handler.name, (entry = { handler, rule: claimRuleOf(handler.name, handler.flow), inFlight: 0, dirty: true, lastClaim: -Infinity }));
    return entry;
  }

  /** Whether the inbox hands this handler's deliveries over instead of running them: it has flow options, or is paused. */
  handsOver(handler: RegisteredHandler): boolean {
    return handler.flow !== undefined || this.paused.has(handler.name);
  }

  /** Hand one event to a handler's flow control, on the inbox batch's transaction (`q`); a key or priority function that throws makes it dead. */
  async handOver(q: Queryable, handler: RegisteredHandler, event: ClaimedEvent): Promise<Settlement> {
    const entry = this.entry(handler);
    const plan = handler.flow;
    const flowKey = plan ? flowKeyOf(plan, event.payload) : '';
    const priorityMs = plan ? priorityMsOf(plan, event.payload) : 0;
    const now = this.deps.clock.now();
    const folded = await handOver(q, entry.rule, {
      eventId: event.id,
      flowKey,
      rankAt: entry.rule.ordered ? 0 : now - priorityMs,
      now,
      resetAny: event.deliveries === null || (event.deliveries.only?.includes(handler.name) ?? false),
      debounce: plan?.debounce,
    });
    this.folded.push(...folded);
    entry.dirty = true;
    return { id: event.id, attempts: event.attempts, status: 'waiting' };
  }

  /** After an inbox batch committed: finish its waiting events (and the ones a debounce folded) whose deliveries already ended. */
  async afterCommit(waiting: number[]): Promise<void> {
    const ids = [...waiting, ...this.folded];
    this.folded = [];
    await finishWaitingEvents(this.deps.db, ids, this.deps.clock.now());
  }

  /** Re-read which handlers are paused, at most once per poll interval (`force`: now). */
  async refresh(force = false): Promise<void> {
    const now = performance.now();
    if (!force && now - this.lastRefresh < this.deps.pollIntervalMs) return;
    this.lastRefresh = now;
    const controls = await pausedHandlers(this.deps.db);
    this.paused = new Set(controls.filter((c) => c.paused).map((c) => c.handler));
    for (const { handler: name } of controls) {
      const handler = this.deps.handlers.byName(name);
      if (handler && !this.entries.has(name)) this.entry(handler);
    }
  }

  /** Claim what each handler's limits allow and start it (without waiting for it); returns how many started and when to look again. */
  async run(): Promise<{ started: number; nextAt?: number }> {
    await this.refresh();
    const now = this.deps.clock.now();
    let started = 0;
    let nextAt: number | undefined;
    for (const entry of this.entries.values()) {
      const due = entry.dirty || (entry.nextAt !== undefined && entry.nextAt <= now) || now - entry.lastClaim >= this.deps.pollIntervalMs;
      const room = this.deps.localLimit - entry.inFlight;
      if (due && room > 0 && !this.paused.has(entry.handler.name)) {
        entry.dirty = false;
        entry.lastClaim = now;
        const leaseMs = Math.max(this.deps.leaseMs, this.deps.handlerTimeoutMs + this.deps.abortGraceMs + 5000) + this.deps.horizonMs;
        const claim = await claimDeliveries(this.deps.db, entry.rule, { now, leaseMs, max: room, horizonMs: this.deps.horizonMs });
        for (const delivery of claim.deliveries) this.start(entry, delivery);
        started += claim.deliveries.length;
        entry.nextAt = claim.deliveries.length > 0 ? now : claim.nextAt !== undefined && claim.nextAt > now ? claim.nextAt : undefined;
      }
      if (entry.nextAt !== undefined) nextAt = Math.min(nextAt ?? Infinity, entry.nextAt);
    }
    return { started, nextAt };
  }

  /** Run rounds until nothing starts, waiting for every run (tests and the CLI). */
  async runOnce(): Promise<number> {
    for (const entry of this.entries.values()) entry.dirty = true;
    await this.refresh(true);
    const { started } = await this.run();
    await this.idle();
    return started;
  }

  /** Resolves when no delivery runs. */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  private start(entry: Entry, delivery: ClaimedDelivery): void {
    entry.inFlight += 1;
    const run = this.runDelivery(entry, delivery)
      .catch((error: unknown) =>
        this.deps.log.error(
          { ...eventFields(delivery.event), handler: entry.rule.handler, err: { message: messageOf(error) } },
          'flow delivery could not be settled; it is retried when its lease ends',
        ),
      )
      .finally(() => {
        entry.inFlight -= 1;
        entry.dirty = true;
        this.running.delete(run);
        this.deps.wake();
      });
    this.running.add(run);
  }

  /** Wait for the delivery's start slot, run the handler, and settle the delivery with its writes. */
  private async runDelivery(entry: Entry, delivery: ClaimedDelivery): Promise<void> {
    const { db, clock, policy, handlerTimeoutMs } = this.deps;
    const wait = delivery.startAt - clock.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const event: ClaimedEvent = { ...delivery.event, debouncedIds: delivery.debouncedIds };
    const startedAt = clock.now();
    const began = performance.now();
    const finish = (error?: unknown): DeliveryOutcome => this.outcome(entry, delivery, error, startedAt, performance.now() - began);
    let outcome: DeliveryOutcome;
    if (delivery.attempts > policy.maxAttempts) {
      outcome = finish(
        new Error(`Claimed ${delivery.attempts} times without finishing (the worker crashed or stopped each time). Fix the cause, then replay it.`),
      );
      await db.transaction((tx) => settleDeliveries(tx, entry.rule, [outcome], clock.now()));
    } else if (db.tuning.inTransactionBudgetMs === undefined) {
      // PostgreSQL: the handler's writes and the delivery's outcome commit together; a throw rolls back its writes only.
      outcome = await db.transaction(async (tx) => {
        await tx.query(SAVEPOINT.take);
        let result: DeliveryOutcome;
        try {
          await runAndFlush(this.runDeps, entry.handler, event, tx, handlerTimeoutMs);
          await tx.query(SAVEPOINT.release);
          result = finish();
        } catch (error) {
          await tx.query(SAVEPOINT.rollback);
          result = finish(error);
        }
        await settleDeliveries(tx, entry.rule, [result], clock.now());
        return result;
      });
    } else {
      // PGlite's one session cannot be held for a handler: it runs on its own, then the outcome is written.
      try {
        await runAndFlush(this.runDeps, entry.handler, event, db, handlerTimeoutMs);
        outcome = finish();
      } catch (error) {
        outcome = finish(error);
      }
      await db.transaction((tx) => settleDeliveries(tx, entry.rule, [outcome], clock.now()));
    }
    await finishWaitingEvents(db, [delivery.event.id], clock.now());
    if (outcome.status === 'dead' || outcome.status === 'parked')
      this.deps.onDead?.(delivery.event, `${entry.rule.handler} ${outcome.status}: ${outcome.error ?? ''}`);
  }

  /** A run's outcome: processed; waiting again after the backoff; or dead (parked, for an ordered handler). */
  private outcome(entry: Entry, delivery: ClaimedDelivery, error: unknown, startedAt: number, durationMs: number): DeliveryOutcome {
    const base = { id: delivery.id, eventId: delivery.event.id, flowKey: delivery.flowKey, attempts: delivery.attempts, startedAt, durationMs };
    if (error === undefined) return { ...base, status: 'processed' };
    const event = { ...delivery.event, attempts: delivery.attempts };
    const settled = settleFailure(event, error, this.deps.policy, this.deps.clock.now(), this.deps.random);
    const message = 'error' in settled ? settled.error : messageOf(error);
    const terminal = settled.status !== 'failed';
    this.deps.log[terminal ? 'error' : 'warn'](
      { ...eventFields(delivery.event), handler: entry.rule.handler, attempts: delivery.attempts, err: { message } },
      terminal ? `delivery ${entry.rule.ordered ? 'parked' : 'dead'}` : 'delivery failed',
    );
    if (settled.status === 'failed') return { ...base, status: 'waiting', error: message, runAfter: settled.nextAttemptAt.getTime() };
    return { ...base, status: entry.rule.ordered ? 'parked' : 'dead', error: message };
  }
}
