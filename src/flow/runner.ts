import type { ClaimedDelivery, DeliveryOutcome } from '../deliveries/claimed.js';
import type { Metrics } from '../metrics.js';
import { OutcomeMetrics } from '../deliveries/outcome-metrics.js';
import { eventFields } from '../deliveries/run-handler.js';
import type { HandlerRegistry, RegisteredHandler } from '../deliveries/registry.js';
import { messageOf } from '../errors.js';
import { claimFlow } from './claim.js';
import { adoptDeliveries } from './adopt.js';
import { sweepIdleKeys } from './key-state.js';
import { claimRuleOf, type ClaimRule } from './rule.js';
import { runFlowUnit, type FlowRunDeps } from './run-unit.js';

/** How often each handler's idle keys whose rate window closed are removed. */
const SWEEP_INTERVAL_MS = 1000;

/** What the flow claimer needs: the inbox batch's database, clock, policy and limits, and its own pacing. */
export interface FlowRunnerDeps extends FlowRunDeps {
  handlers: HandlerRegistry;
  metrics: Metrics;
  leaseMs: number;
  abortGraceMs: number;
  /** How often idle handlers are looked at again (other instances' new deliveries, a resume). */
  pollIntervalMs: number;
  /** How far ahead rate-limited starts are claimed (each then waits for its slot); 0 with an injected clock. */
  horizonMs: number;
  /** Deliveries of one handler this instance runs at once. */
  localLimit: number;
  /** A delivery ended: claim again now (another may start). */
  wake(): void;
}

/** What a claim's deliveries run as: one unit each, or one batch per key. */
function units(rule: ClaimRule, deliveries: ClaimedDelivery[]): ClaimedDelivery[][] {
  if (!rule.batch) return deliveries.map((d) => [d]);
  const byKey = new Map<string, ClaimedDelivery[]>();
  for (const d of deliveries) {
    const unit = byKey.get(d.flowKey ?? '');
    if (unit) unit.push(d);
    else byKey.set(d.flowKey ?? '', [d]);
  }
  return [...byKey.values()];
}

interface Entry {
  handler: RegisteredHandler;
  rule: ClaimRule;
  inFlight: number;
  /** Something changed here (new deliveries, a delivery ended): claim at the next round. */
  dirty: boolean;
  nextAt?: number;
  lastClaim: number;
  /** When its idle keys were last swept (the clock). */
  lastSweep: number;
  adopted: boolean;
}

/**
 * Flow control's side of the worker: claims each flow-controlled handler's
 * deliveries as its limits allow and runs each unit (a delivery, or a batch)
 * with its outcome in one transaction on PostgreSQL.
 */
export class FlowRunner {
  private readonly entries = new Map<string, Entry>();
  private readonly running = new Set<Promise<void>>();
  private readonly runDeps: FlowRunDeps;
  /** Units running at once, all handlers together: each holds a connection for its run, so fewer than the pool has (room for the inbox's batches). */
  private readonly unitLimit: number;
  private readonly outcomes: OutcomeMetrics;

  constructor(private readonly deps: FlowRunnerDeps) {
    this.runDeps = deps;
    this.outcomes = new OutcomeMetrics(deps.metrics);
    const connections = deps.db.tuning.connections;
    this.unitLimit = connections === undefined ? Infinity : Math.max(1, connections - deps.db.tuning.lanes - 1);
    for (const handler of deps.handlers.flowControlled()) {
      const rule = claimRuleOf(handler.name, handler.flow!);
      this.entries.set(handler.name, { handler, rule, inFlight: 0, dirty: true, lastClaim: -Infinity, lastSweep: -Infinity, adopted: false });
    }
  }

  /** New deliveries were written (by this instance's inbox claim): claim at the next round. */
  markDirty(): void {
    for (const entry of this.entries.values()) entry.dirty = true;
  }

  /** Claim what each handler's limits allow and start it (without waiting for it); returns how many started and when to look again. */
  async run(): Promise<{ started: number; nextAt?: number }> {
    const now = this.deps.clock.now();
    let started = 0;
    let nextAt: number | undefined;
    for (const entry of this.entries.values()) {
      if (!entry.adopted) {
        await adoptDeliveries(this.deps.db, entry.rule.handler, now);
        entry.adopted = true;
      }
      if (now - entry.lastSweep >= SWEEP_INTERVAL_MS) {
        entry.lastSweep = now;
        await sweepIdleKeys(this.deps.db, entry.rule.handler, now);
      }
      const due = entry.dirty || (entry.nextAt !== undefined && entry.nextAt <= now) || now - entry.lastClaim >= this.deps.pollIntervalMs;
      const room = Math.min(this.deps.localLimit - entry.inFlight, this.unitLimit - this.running.size);
      if (due && room > 0) {
        entry.dirty = false;
        entry.lastClaim = now;
        const leaseMs = Math.max(this.deps.leaseMs, this.deps.handlerTimeoutMs + this.deps.abortGraceMs + 5000) + this.deps.horizonMs;
        const claim = await claimFlow(this.deps.db, entry.rule, { now, leaseMs, max: room, horizonMs: this.deps.horizonMs });
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
    this.markDirty();
    const { started } = await this.run();
    await this.idle();
    return started;
  }

  /** Resolves when no delivery runs. */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  /** Count a unit's outcomes as the inbox counts its own (one call of a batch handler is timed once). */
  private observe(unit: readonly ClaimedDelivery[], outcomes: readonly DeliveryOutcome[]): void {
    for (const [i, outcome] of outcomes.entries()) this.outcomes.observe(unit[i]!, outcome, i === 0);
    this.outcomes.flush();
  }

  /** Start one unit (a delivery, or a batch) without waiting for it; a settle that fails is retried when its lease ends. */
  private start(entry: Entry, unit: ClaimedDelivery[]): void {
    entry.inFlight += 1;
    const run: Promise<void> = runFlowUnit(this.runDeps, entry.handler, entry.rule, unit)
      .then((outcomes) => this.observe(unit, outcomes))
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
