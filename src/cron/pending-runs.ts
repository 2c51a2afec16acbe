import type { Clock } from '../clock.js';
import { jobsWithDueRuns, startDueRun } from '../db/cron-queue.js';
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
}

/**
 * Start the `pending` runs that are due (retries, ticks queued behind a
 * running one, caught-up and backfilled ticks), oldest first, after failing
 * the runs whose instance died past their expiry and queueing their retries: one per job at
 * a time unless the job allows overlap, so a job's queue drains in tick
 * order. The runs go on in the background; resolves to how many started.
 */
export async function startDueRuns(deps: PendingDeps, only?: string): Promise<number> {
  const { db, jobs, clock, runner, log } = deps;
  const now = new Date(clock.now());
  let started = 0;
  for (const job of only ? [only] : await jobsWithDueRuns(db, now)) {
    const definition = jobs.get(job);
    if (!definition) continue; // its file is gone: the rows wait until it comes back
    for (;;) {
      const row = await startDueRun(db, {
        job,
        now,
        expiresAt: new Date(now.getTime() + definition.timeoutMs),
        allowOverlap: definition.overlap === 'allow',
        instance: INSTANCE,
        retry: retryRule(definition),
      });
      if (!row) break;
      started += 1;
      runner.runClaimed({ ...row, startedAt: now, scheduledFor: row.scheduledFor && new Date(row.scheduledFor) }).catch((error: unknown) => {
        log.error({ job, runId: row.id, err: { message: messageOf(error) } }, 'pending cron run could not be run');
      });
      if (definition.overlap !== 'allow') break;
    }
  }
  return started;
}
