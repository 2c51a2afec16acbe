import type { Clock } from '../clock.js';
import type { Database } from '../db/database.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { ClaimedDelivery, ClaimedEvent, DeliveryOutcome } from '../deliveries/claimed.js';
import type { HandlerRegistry } from '../deliveries/registry.js';
import type { RetryPolicy } from '../deliveries/retry.js';

/** What one batch needs; the loop (worker.ts) owns when batches run. */
export interface BatchDeps {
  db: Database;
  handlers: HandlerRegistry;
  clock: Clock;
  log: Logger;
  metrics: Metrics;
  policy: RetryPolicy;
  random: () => number;
  leaseMs: number;
  /** A handler's time limit; then its `ctx.signal` aborts. */
  handlerTimeoutMs: number;
  /** How long an aborted handler is waited for (its lease still renewed) before the delivery is settled anyway. */
  abortGraceMs: number;
  batchSize: number;
  isStopping(): boolean;
  /** The handlers that run inline and are not paused (the names a claim takes due deliveries of), and the paused ones. */
  lanes(): { inline: readonly string[]; paused: ReadonlySet<string> };
  /** Told of each delivery settled `dead` or `parked`, after the commit (alerts). Must not throw or block. */
  onDead?: (event: ClaimedEvent, error: string) => void;
  /** A claim wrote flow-controlled deliveries: their claimer should look. */
  onFlowWork?: () => void;
  /** Resolves once the receivers' queued inserts are written, or after a bounded wait: an on-demand pass calls it before each delivery. */
  yieldToIngest?: () => Promise<void>;
}

/** Thrown inside the batch transaction to roll it back and fall back to one delivery at a time. */
export const BATCH_ABANDONED = new Error('batch abandoned');

/** Whether the shared transaction broke (by which delivery) or was given up, and the delivery that went on outside it. */
export interface BatchState {
  brokenBy: number | undefined;
  abandoned: boolean;
  /** A project handler slower than the transaction may last, finishing outside it (its outcome settled after the commit). */
  handedOff?: { delivery: ClaimedDelivery; finish: Promise<Ran>; startedAt: number; began: number };
}

/** A delivery and how its attempt ended. */
export interface Ran {
  delivery: ClaimedDelivery;
  outcome: DeliveryOutcome;
}

/** How a claim's shared transaction ended: committed with its outcomes, or rolled back with the outcomes it decided. */
export type BatchResult =
  | { kind: 'committed'; ran: Ran[]; owned: Set<number>; handedOff?: BatchState['handedOff'] }
  | { kind: 'fallback'; decided: Ran[]; handedOff?: BatchState['handedOff'] };
