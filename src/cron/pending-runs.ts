import type { Clock } from '../clock.js';
import { jobsWithDueRuns, startDueRun } from './queue-sql.js';
import type { Database } from '../db/database.js';
import { messageOf } from '../errors.js';
import type { Logger } from '../log.js';
import type { JobRegistry } from './registry.js';
import { retryRule, type JobRunner } from './run-job.js';
import { INSTANCE } from './runner-deps.js';

/** What starting pending runs needs. */
export interface PendingDeps {
  db: Database;
  jobs: JobRegistry;
  clock: Clock;
  runner: JobRunner;
  log: Logger;
  /** Look again at `at` for this job (its rate's next slot); absent: the scheduler's next pass does. */
  wakeAt?: (job: string, at: Date) => void;
}

/**
 * Start the `pending` runs that are due (retries, ticks queued behind a
 * running one or over the job's limits, caught-up and backfilled ticks),
 * oldest first, after failing the runs whose instance died past their expiry
 * and queueing their retries: one per job at a time unless the job allows
 * overlap (or as many as its concurrency has places), so a job's queue drains
 * in tick order. A job whose rate holds its next run back is handed to
 * `wakeAt` with that slot. The runs go on in the background; resolves to how
 * many started.
 */
export async function startDueRuns(deps: PendingDeps, only?: string): Promise<number> {
  const { db, jobs, clock, runner, log } = deps;
  const now = new Date(clock.now());
  let started = 0;
  for (const job of only ? [only] : await jobsWithDueRuns(db, now)) {
    const definition = jobs.get(job);
    if (!definition) continue; // its file is gone: the rows wait until it comes back
    for (;;) {
      const { row, retryAt } = await startDueRun(db, {
        job,
        now,
        expiresAt: new Date(now.getTime() + definition.timeoutMs),
        allowOverlap: definition.overlap === 'allow',
        limits: definition.limits,
        instance: INSTANCE,
        retry: retryRule(definition),
      });
      if (retryAt) deps.wakeAt?.(job, retryAt);
      if (!row) break;
      started += 1;
      runner.runClaimed({ ...row, startedAt: now, scheduledFor: row.scheduledFor && new Date(row.scheduledFor) }).catch((error: unknown) => {
        log.error({ job, runId: row.id, err: { message: messageOf(error) } }, 'pending cron run could not be run');
      });
      if (definition.overlap !== 'allow' && definition.limits?.concurrency === undefined) break;
    }
  }
  return started;
}

/**
 * One timer per job that a rate holds back, at its next slot, to start its
 * pending runs then rather than at the scheduler's next pass (an earlier slot
 * replaces a later one). `active()` false (no scheduler, or stopping): no timer.
 */
export function rateWaker(start: (job: string) => Promise<unknown>, clock: Clock, active: () => boolean) {
  const timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  return {
    wakeAt(job: string, at: Date): void {
      const current = timers.get(job);
      if (!active() || (current && current.at <= at.getTime())) return;
      if (current) clearTimeout(current.timer);
      const timer = setTimeout(
        () => {
          timers.delete(job);
          if (active()) void start(job);
        },
        Math.max(0, at.getTime() - clock.now()),
      );
      timers.set(job, { at: at.getTime(), timer });
    },
    stop(): void {
      for (const { timer } of timers.values()) clearTimeout(timer);
      timers.clear();
    },
  };
}
