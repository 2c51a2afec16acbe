import type { CronService } from './cron/cron-service.js';
import type { Worker } from './inbox/worker.js';
import type { Logger } from './log.js';
import { messageOf } from './errors.js';
import type { RetentionLoop } from './retention/retention-loop.js';

/** What one bounded pass did: how many events it claimed, how many cron runs it started, and whether work was left for the next pass. */
export interface DrainReport {
  /** Events claimed and run by their handlers (each settled: processed, retried later, or dead). */
  claimed: number;
  /** Due cron runs (retries, queued runs) started by this pass. */
  cronRunsStarted: number;
  /** The budget ran out with events still claimable: the next pass (or the drain route) takes them. */
  budgetExhausted: boolean;
  /** How long the pass took, in ms. */
  tookMs: number;
}

/** Processing on demand instead of in a loop: what a serverless function calls after answering, and the drain route calls every minute. */
export interface OnDemandProcessing {
  /**
   * Claim and run due events until none is left or `budgetMs` has passed; a call while a pass runs joins that pass.
   * With `finishBy` (a performance.now() time the platform may cut the process at), claims are sized to the time left and each delivery commits on its own.
   */
  process(budgetMs: number, finishBy?: number): Promise<DrainReport>;
  /**
   * Make the pass that runs look once more before it ends, and say whether one runs: an event stored meanwhile
   * needs no pass of its own (nor anything holding the function for it) when this returns true.
   */
  join(): boolean;
  /** Everything a long-running process would have done meanwhile: due cron runs, events, an alert check, bulk replays and (hourly) retention, within `budgetMs` (and `finishBy`). */
  drain(budgetMs: number, finishBy?: number): Promise<DrainReport>;
}

/** A retention pass at most this often per process: every step is idempotent, so a cold instance simply does one on its first drain. */
const RETENTION_EVERY_MS = 3_600_000;

/**
 * Build on-demand processing over the service's own worker and cron runner,
 * with the same claims and leases as the loops of `hookrun start`: a function
 * frozen or killed mid-handler leaves its claim to expire after LEASE_SECONDS,
 * and the next pass takes it over. The budget decides whether to claim
 * again. Without `finishBy` a batch is not cut short by it; with `finishBy`
 * (the platform's own limit), each claim is sized to the time left, each
 * delivery commits on its own, a handler's time limit ends at `finishBy`, and
 * a claimed delivery with too little time left goes back unstarted.
 */
export function createOnDemandProcessing(deps: {
  worker: Worker | undefined;
  cron: CronService;
  retention: RetentionLoop | undefined;
  checkAlerts: () => Promise<void>;
  /** Advance running bulk replays at their rates until the deadline (performance.now()); no loop does it here. */
  advanceReplays?: (deadline: number) => Promise<number>;
  log: Logger;
}): OnDemandProcessing {
  const { worker, cron, log } = deps;
  let lastRetentionAt = Number.NEGATIVE_INFINITY;

  async function claimUntil(deadline: number, finishBy: number | undefined): Promise<{ claimed: number; budgetExhausted: boolean }> {
    let claimed = 0;
    if (!worker) return { claimed, budgetExhausted: false };
    while (performance.now() < Math.min(deadline, finishBy ?? Infinity)) {
      const batch = await worker.runOnce(finishBy);
      claimed += batch;
      if (batch === 0) return { claimed, budgetExhausted: false };
    }
    return { claimed, budgetExhausted: true };
  }

  // One pass at a time per instance: a request that stores an event while a pass runs joins it (and makes it look once more before it ends).
  let running: Promise<DrainReport> | undefined;
  let lookAgain = false;
  const pass = async (budgetMs: number, finishBy: number | undefined): Promise<DrainReport> => {
    const started = performance.now();
    let claimed = 0;
    let budgetExhausted: boolean;
    try {
      do {
        lookAgain = false;
        const round = await claimUntil(started + budgetMs, finishBy);
        claimed += round.claimed;
        budgetExhausted = round.budgetExhausted;
      } while (lookAgain && !budgetExhausted);
    } finally {
      running = undefined; // in the same step as the last look: a call from now on starts its own pass
    }
    return { claimed, cronRunsStarted: 0, budgetExhausted, tookMs: Math.round(performance.now() - started) };
  };
  const join = (): boolean => {
    if (running) lookAgain = true;
    return running !== undefined;
  };
  const process = (budgetMs: number, finishBy?: number): Promise<DrainReport> => (join() ? running! : (running = pass(budgetMs, finishBy)));

  const drain = async (budgetMs: number, finishBy?: number): Promise<DrainReport> => {
    const started = performance.now();
    const deadline = Math.min(started + budgetMs, finishBy ?? Infinity);
    const cronRunsStarted = await cron.runDue();
    const { claimed, budgetExhausted } = await claimUntil(deadline, finishBy);
    // A cron run started above finishes inside this function, while it still has time (frozen afterwards, its run is retried).
    await cron.idle(Math.max(0, deadline - performance.now()));
    await deps.checkAlerts().catch((error: unknown) => log.warn({ err: { message: messageOf(error) } }, 'alert check failed; the next drain tries again'));
    await deps
      .advanceReplays?.(deadline)
      .catch((error: unknown) => log.warn({ err: { message: messageOf(error) } }, 'bulk replay step failed; the next drain goes on'));
    if (deps.retention && performance.now() - lastRetentionAt >= RETENTION_EVERY_MS && performance.now() < deadline) {
      lastRetentionAt = performance.now();
      await deps.retention
        .runOnce()
        .catch((error: unknown) => log.warn({ err: { message: messageOf(error) } }, 'retention pass failed; the next drain tries again'));
    }
    return { claimed, cronRunsStarted, budgetExhausted, tookMs: Math.round(performance.now() - started) };
  };

  return { process, join, drain };
}
