import type { Clock } from '../clock.js';
import type { Database, Queryable } from '../db/database.js';
import type { ClaimedEvent, Settlement } from '../db/inbox-queue.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { HandlerRegistry, RegisteredHandler } from './handlers/registry.js';
import type { RetryPolicy } from './retry.js';

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
  /** How long an aborted handler is waited for (its lease still renewed) before the event is settled anyway. */
  abortGraceMs: number;
  batchSize: number;
  isStopping(): boolean;
  /** Told of each event settled `dead`, after the commit (alerts). Must not throw or block. */
  onDead?: (event: ClaimedEvent, error: string) => void;
  /** Flow control: the handlers whose deliveries are handed over instead of run inline. */
  flow?: FlowHandOff;
}

/** What the inbox batch asks of flow control (inbox/flow-runner.ts implements it). */
export interface FlowHandOff {
  /** Whether this handler's delivery of this event is handed over instead of run inline. */
  handsOver(handler: RegisteredHandler, event: ClaimedEvent): boolean;
  /** Hand it over on the batch's transaction; the handler's settlement is `waiting`. */
  handOver(q: Queryable, handler: RegisteredHandler, event: ClaimedEvent): Promise<Settlement>;
  /** After the claim's outcome committed: its keys brought up to date, its finished waiting events finished. */
  afterCommit(claimed: readonly number[], waiting: readonly number[]): Promise<void>;
}

/** Thrown inside the batch transaction to roll it back and fall back to one event at a time. */
export const BATCH_ABANDONED = new Error('batch abandoned');

/** Whether the shared transaction broke (by which event) or was given up. */
export interface BatchState {
  brokenBy: number | undefined;
  abandoned: boolean;
}

/** How a claim's shared transaction ended: committed with its settlements, or rolled back with the outcomes it decided. */
export type BatchResult = { kind: 'committed'; settlements: Settlement[]; owned: number[] } | { kind: 'fallback'; decided: Settlement[] };
