import type { Queryable } from '../db/database.js';
import type { BatchDeps, FlowHandOff } from './batch-deps.js';
import { claimDeliveries, type ClaimedDelivery, type ClaimRule } from '../db/flow-claim.js';
import { ensureKey, handOver } from '../db/flow-handoff.js';
import { recomputeKeys, repairKeys } from '../db/flow-keys.js';
import { finishWaitingEvents } from '../db/flow-settle.js';
import { pausedHandlers } from '../db/handler-controls.js';
import type { ClaimedEvent, Settlement } from '../db/inbox-queue.js';
import { messageOf } from '../errors.js';
import { flowKeyOf, priorityMsOf } from '../flow/keys.js';
import type { FlowPlan } from '../flow/options.js';
import { eventFields } from './handler-run.js';
import { runFlowUnit, type FlowRunDeps } from './flow-run.js';
import type { RegisteredHandler } from './handlers/registry.js';

/** How often each handler's keys are checked for a hand-over whose recompute was lost (repairKeys). */
const REPAIR_INTERVAL_MS = 60_000;

/** What the flow claimer needs: the inbox batch's database, clock, policy and limits, and its own pacing. */
export interface FlowRunnerDeps extends Pick<
  BatchDeps,
  'db' | 'handlers' | 'clock' | 'log' | 'metrics' | 'policy' | 'random' | 'leaseMs' | 'handlerTimeoutMs' | 'abortGraceMs' | 'onDead'
> {
  /** How often paused handlers are read, and idle handlers looked at again. */
  pollIntervalMs: number;
  /** How far ahead rate-limited starts are claimed (each then waits for its slot); 0 with an injected clock. */
  horizonMs: number;
  /** Deliveries of one handler this instance runs at once. */
  localLimit: number;
  /** A delivery ended: claim again now (another may start). */
  wake(): void;
}

/** The claim rule a handler's flow options make. */
export function claimRuleOf(name: string, plan: FlowPlan | undefined): ClaimRule {
  return {
    handler: name,
    keyLimit: plan?.ordered ? 1 : plan?.concurrency?.perKey ? plan.concurrency.limit : null,
    ordered: plan?.ordered ?? false,
    globalLimit: plan?.concurrency && !plan.concurrency.perKey ? plan.concurrency.limit : null,
    rate: plan?.rate ? { intervalMs: plan.rate.periodMs / plan.rate.limit, perKey: plan.rate.perKey } : undefined,
    batch: plan?.batch ? { maxSize: plan.batch.maxSize, maxWaitMs: plan.batch.maxWaitMs } : undefined,
  };
}

/** What a claim's deliveries run as: one unit each, or one batch per key. */
function units(rule: ClaimRule, deliveries: ClaimedDelivery[]): ClaimedDelivery[][] {
  if (!rule.batch) return deliveries.map((d) => [d]);
  const byKey = new Map<string, ClaimedDelivery[]>();
  for (const d of deliveries) {
    const unit = byKey.get(d.flowKey);
    if (unit) unit.push(d);
    else byKey.set(d.flowKey, [d]);
  }
  return [...byKey.values()];
}

interface Entry {
  handler: RegisteredHandler;
  rule: ClaimRule;
  inFlight: number;
  /** Something changed here (a hand-over, a delivery ended): claim at the next round. */
  dirty: boolean;
  nextAt?: number;
  lastClaim: number;
  /** When its keys were last repaired (repairKeys), by performance.now(). */
  lastRepair: number;
}

/**
 * Flow control's side of the worker: hands events to flow-controlled (and
 * paused) handlers inside the inbox batch, claims their deliveries as the
 * limits allow, runs each (its writes and outcome in one transaction on
 * PostgreSQL) and finishes the events whose deliveries have all ended.
 */
export class FlowRunner implements FlowHandOff {
  private readonly entries = new Map<string, Entry>();
  private paused = new Set<string>();
  private lastRefresh = -Infinity;
  /** Hand-overs of inbox claims not yet committed, by event id: their keys are recomputed after the commit. */
  private readonly pending = new Map<number, Array<{ entry: Entry; flowKey: string; folded: number[] }>>();
  private readonly running = new Set<Promise<void>>();
  private readonly runDeps: FlowRunDeps;

  constructor(private readonly deps: FlowRunnerDeps) {
    const { db, clock, log, metrics, policy, random, handlerTimeoutMs, onDead } = deps;
    this.runDeps = { db, clock, log, metrics, policy, random, handlerTimeoutMs, onDead, runDeps: { clock, log, abortGraceMs: deps.abortGraceMs } };
    for (const handler of deps.handlers.flowControlled()) this.entry(handler);
  }

  private entry(handler: RegisteredHandler): Entry {
    let entry = this.entries.get(handler.name);
    if (!entry)
      this.entries.set(
        handler.name,
        (entry = { handler, rule: claimRuleOf(handler.name, handler.flow), inFlight: 0, dirty: true, lastClaim: -Infinity, lastRepair: -Infinity }),
      );
    return entry;
  }

  /**
   * Whether the inbox hands this delivery over instead of running it: the
   * handler has flow options or is paused; a handler keeping captured rows in
   * order (ROW_ORDER) only for a captured change.
   */
  handsOver(handler: RegisteredHandler, event: ClaimedEvent): boolean {
    if (this.paused.has(handler.name)) return true;
    return handler.flow?.byRowKey ? event.orderKey != null : handler.flow !== undefined;
  }

  /** Hand one event to a handler's flow control, on the inbox batch's transaction (`q`); a key or priority function that throws makes it dead. */
  async handOver(q: Queryable, handler: RegisteredHandler, event: ClaimedEvent): Promise<Settlement> {
    const entry = this.entry(this.deps.handlers.byName(handler.name) ?? handler);
    const plan = handler.flow;
    // Without a key of its own (a paused handler, a change without a row), an ordered handler's delivery is its own key.
    const ownKey = entry.rule.ordered ? `event:${event.id}` : '';
    const flowKey = plan?.byRowKey ? (event.orderKey ?? ownKey) : plan ? flowKeyOf(plan, event.payload) : ownKey;
    const priorityMs = plan ? priorityMsOf(plan, event.payload) : 0;
    const now = this.deps.clock.now();
    // One session (PGlite): nothing runs beside the batch, so its own transaction is the only place to write.
    await ensureKey(this.deps.db.tuning.longestStatementMs === 0 ? q : this.deps.db, entry.rule.handler, flowKey, now);
    const folded = await handOver(q, entry.rule, {
      eventId: event.id,
      flowKey,
      rankAt: entry.rule.ordered ? 0 : now - priorityMs,
      now,
      resetAny: event.deliveries === null || (event.deliveries.only?.includes(handler.name) ?? false),
      debounce: plan?.debounce,
    });
    this.pending.set(event.id, [...(this.pending.get(event.id) ?? []), { entry, flowKey, folded }]);
    entry.dirty = true;
    return { id: event.id, attempts: event.attempts, status: 'waiting' };
  }

  /**
   * After an inbox claim's outcome committed (`claimed`: its events; `waiting`:
   * those now waiting): bring the keys it handed over up to date, now that its
   * deliveries are visible to every claim, and finish its waiting events (and
   * the ones a debounce folded) whose deliveries already ended.
   */
  async afterCommit(claimed: readonly number[], waiting: readonly number[]): Promise<void> {
    const keys = new Map<Entry, Set<string>>();
    const ids = [...waiting];
    for (const id of claimed) {
      for (const { entry, flowKey, folded } of this.pending.get(id) ?? []) {
        keys.set(entry, (keys.get(entry) ?? new Set()).add(flowKey));
        ids.push(...folded);
      }
      this.pending.delete(id);
    }
    for (const [entry, list] of keys) await recomputeKeys(this.deps.db, entry.rule, list);
    await finishWaitingEvents(this.deps.db, ids, this.deps.clock.now());
    if (keys.size > 0) this.deps.wake();
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
      if (performance.now() - entry.lastRepair >= REPAIR_INTERVAL_MS) {
        entry.lastRepair = performance.now();
        await repairKeys(this.deps.db, entry.rule);
      }
      if (due && room > 0 && !this.paused.has(entry.handler.name)) {
        entry.dirty = false;
        entry.lastClaim = now;
        const leaseMs = Math.max(this.deps.leaseMs, this.deps.handlerTimeoutMs + this.deps.abortGraceMs + 5000) + this.deps.horizonMs;
        const claim = await claimDeliveries(this.deps.db, entry.rule, { now, leaseMs, max: room, horizonMs: this.deps.horizonMs });
        for (const unit of units(entry.rule, claim.deliveries)) this.start(entry, unit);
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

  /** Start one unit (a delivery, or a batch) without waiting for it; a settle that fails is retried when its lease ends. */
  private start(entry: Entry, unit: ClaimedDelivery[]): void {
    entry.inFlight += 1;
    const run = runFlowUnit(this.runDeps, entry.handler, entry.rule, unit)
      .catch((error: unknown) =>
        this.deps.log.error(
          { ...eventFields(unit[0]!.event), handler: entry.rule.handler, err: { message: messageOf(error) } },
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
}
