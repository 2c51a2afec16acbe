import type { Database, Queryable } from '../db/database.js';
import { mayStartPending, type RunLimits } from './limits-sql.js';
import { COLUMNS, lockJob, runningRunOf, type CronRunRow, type RetryRule } from './runs-sql.js';

export { enqueueRuns, type PendingRun } from './runs-sql.js';

/** Jobs with a `pending` run due at `now` (a paused job's wait), or a `running` one past its expiry (its instance died: it may be retried), each once. */
export async function jobsWithDueRuns(db: Queryable, now: Date): Promise<string[]> {
  const rows = await db.query<{ job: string }>(
    `SELECT DISTINCT job FROM hookrun.cron_runs r
     WHERE (status = 'pending' AND due_at <= $1::timestamptz AND NOT EXISTS (SELECT 1 FROM hookrun.cron_pauses p WHERE p.job = r.job))
        OR (status = 'running' AND expires_at <= $1::timestamptz)`,
    [now],
  );
  return rows.map((r) => r.job);
}

/**
 * Start the job's oldest due `pending` run, under the job's lock (which fails
 * expired `running` rows and queues their retries by `retry`): it becomes
 * `running` on this instance. With `limits`, only while the job has a place
 * under its concurrency and its rate allows a start (else `retryAt`: the next
 * rate slot); without, unless the job allows overlap, nothing starts while
 * another run of it is going (queued and caught-up ticks run one after
 * another, in tick order). While the job is paused nothing starts: its
 * retries, queued and backfilled ticks wait, due, until it is resumed. No
 * `row` when there is nothing to start.
 */
export async function startDueRun(
  db: Database,
  options: { job: string; now: Date; expiresAt: Date; allowOverlap: boolean; limits?: RunLimits; instance: string; retry?: RetryRule },
): Promise<{ row?: CronRunRow; retryAt?: Date }> {
  return db.transaction(async (tx) => {
    await lockJob(tx, options.job, options.now, options.retry);
    if ((await tx.query('SELECT 1 FROM hookrun.cron_pauses WHERE job = $1', [options.job])).length > 0) return {};
    if (options.limits) {
      const may = await mayStartPending(tx, options.job, options.now, options.limits);
      if (!may.ok) return { retryAt: may.retryAt };
    }
    if (!options.limits?.concurrency && !options.allowOverlap && (await runningRunOf(tx, options.job)) !== undefined) return {};
    const rows = await tx.query<CronRunRow>(
      `UPDATE hookrun.cron_runs SET status = 'running', started_at = $2, expires_at = $3, instance = $4
       WHERE id = (SELECT id FROM hookrun.cron_runs WHERE job = $1 AND status = 'pending' AND due_at <= $2::timestamptz
                   ORDER BY due_at, scheduled_for NULLS LAST, id LIMIT 1)
       RETURNING ${COLUMNS}`,
      [options.job, options.now, options.expiresAt, options.instance],
    );
    const row = rows[0];
    return row ? { row: { ...row, id: Number(row.id), retryOf: row.retryOf === null ? null : Number(row.retryOf) } } : {};
  });
}

/** Pause a job on every instance; false when it was already paused. */
export async function pauseJob(db: Queryable, job: string, now: Date): Promise<boolean> {
  const rows = await db.query('INSERT INTO hookrun.cron_pauses (job, paused_at) VALUES ($1, $2) ON CONFLICT (job) DO NOTHING RETURNING job', [job, now]);
  return rows.length === 1;
}

/** Resume a job; when it had been paused, the time it was (so the caller can catch up the ticks since). */
export async function resumeJob(db: Queryable, job: string): Promise<Date | undefined> {
  const rows = await db.query<{ paused_at: Date | string }>('DELETE FROM hookrun.cron_pauses WHERE job = $1 RETURNING paused_at', [job]);
  return rows[0] ? new Date(rows[0].paused_at) : undefined;
}

/** Every paused job and since when. */
export async function pausedJobs(db: Queryable): Promise<Map<string, Date>> {
  const rows = await db.query<{ job: string; paused_at: Date | string }>('SELECT job, paused_at FROM hookrun.cron_pauses');
  return new Map(rows.map((r) => [r.job, new Date(r.paused_at)]));
}

/** Ticks of the job that have a run (any status) at or after `attempt` 1, among `ticks`. */
export async function ticksWithRuns(db: Queryable, job: string, ticks: readonly Date[]): Promise<Set<number>> {
  if (ticks.length === 0) return new Set();
  const rows = await db.query<{ at: Date | string }>(
    `SELECT DISTINCT scheduled_for AS at FROM hookrun.cron_runs WHERE job = $1 AND scheduled_for = ANY($2::timestamptz[])`,
    [job, ticks],
  );
  return new Set(rows.map((r) => new Date(r.at).getTime()));
}

/**
 * Turn the ticks skipped while the job was paused (since `since`) into
 * `pending` runs again, for a resume with catch-up; `limit` newest of them.
 */
export async function requeuePausedTicks(db: Queryable, job: string, since: Date, now: Date, limit: number): Promise<number> {
  const rows = await db.query(
    `UPDATE hookrun.cron_runs SET status = 'pending', due_at = $4, started_at = $4, finished_at = NULL, duration_ms = NULL, error = NULL
     WHERE id IN (SELECT id FROM hookrun.cron_runs WHERE job = $1 AND status = 'skipped' AND attempt = 1 AND scheduled_for >= $2::timestamptz
                  AND error LIKE 'paused:%' ORDER BY scheduled_for DESC LIMIT $3)
     RETURNING id`,
    [job, since, limit, now],
  );
  return rows.length;
}
