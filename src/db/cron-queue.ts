import type { Database, Queryable } from './database.js';
import { COLUMNS, lockJob, runningRunOf, type CronRunRow, type CronTrigger } from './cron-runs.js';

/** A run to do later: a retry, a missed tick caught up, a backfilled tick. */
export interface PendingRun {
  job: string;
  trigger: CronTrigger;
  scheduledFor: Date | null;
  attempt: number;
  retryOf: number | null;
  dueAt: Date;
}

/**
 * Queue runs as `pending` rows. The unique (job, scheduled_for, attempt) key
 * makes each once however many instances (or CLI calls) queue it; returns
 * the ids of the rows this call created.
 */
export async function enqueueRuns(db: Queryable, runs: readonly PendingRun[]): Promise<number[]> {
  if (runs.length === 0) return [];
  const rows = await db.query<{ id: string | number }>(
    `INSERT INTO hookrun.cron_runs (job, trigger, scheduled_for, attempt, retry_of, started_at, due_at, status)
     SELECT job, trigger, scheduled_for, attempt, retry_of, due_at, due_at, 'pending'
     FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::int[], $5::bigint[], $6::timestamptz[])
       AS r(job, trigger, scheduled_for, attempt, retry_of, due_at)
     ON CONFLICT (job, scheduled_for, attempt) DO NOTHING
     RETURNING id`,
    [runs.map((r) => r.job), runs.map((r) => r.trigger), runs.map((r) => r.scheduledFor), runs.map((r) => r.attempt), runs.map((r) => r.retryOf), runs.map((r) => r.dueAt)],
  );
  return rows.map((r) => Number(r.id));
}

/** Jobs with a `pending` run due at `now`, each once. */
export async function jobsWithDueRuns(db: Queryable, now: Date): Promise<string[]> {
  const rows = await db.query<{ job: string }>(`SELECT DISTINCT job FROM hookrun.cron_runs WHERE status = 'pending' AND due_at <= $1::timestamptz`, [now]);
  return rows.map((r) => r.job);
}

/**
 * Start the job's oldest due `pending` run, under the job's lock: it becomes
 * `running` on this instance. Unless the job allows overlap, nothing starts
 * while another run of it is going (queued and caught-up ticks run one after
 * another, in tick order). Undefined when there is nothing to start.
 */
export async function startDueRun(
  db: Database,
  options: { job: string; now: Date; expiresAt: Date; allowOverlap: boolean; instance: string },
): Promise<CronRunRow | undefined> {
  return db.transaction(async (tx) => {
    await lockJob(tx, options.job, options.now);
    if (!options.allowOverlap && (await runningRunOf(tx, options.job)) !== undefined) return undefined;
    const rows = await tx.query<CronRunRow>(
      `UPDATE hookrun.cron_runs SET status = 'running', started_at = $2, expires_at = $3, instance = $4
       WHERE id = (SELECT id FROM hookrun.cron_runs WHERE job = $1 AND status = 'pending' AND due_at <= $2::timestamptz
                   ORDER BY due_at, scheduled_for NULLS LAST, id LIMIT 1)
       RETURNING ${COLUMNS}`,
      [options.job, options.now, options.expiresAt, options.instance],
    );
    return rows[0] && { ...rows[0], id: Number(rows[0].id), retryOf: rows[0].retryOf === null ? null : Number(rows[0].retryOf) };
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
  const rows = await db.query<{ at: Date | string }>(`SELECT DISTINCT scheduled_for AS at FROM hookrun.cron_runs WHERE job = $1 AND scheduled_for = ANY($2::timestamptz[])`, [job, ticks]);
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
