import type { Queryable } from '../db/database.js';
import { COLUMNS, type CronRunRow, type CronRunStatus } from './runs-sql.js';

/** The latest tick recorded for a job, so a restarted scheduler knows which ticks it missed. */
export async function lastScheduledFor(db: Queryable, job: string): Promise<Date | null> {
  const rows = await db.query<{ at: Date | null }>('SELECT max(scheduled_for) AS at FROM hookrun.cron_runs WHERE job = $1', [job]);
  return rows[0]?.at ? new Date(rows[0].at) : null;
}

/** The most recent run of each named job (any trigger, any status). */
export async function latestCronRuns(db: Queryable, jobs: string[]): Promise<Map<string, CronRunRow>> {
  if (jobs.length === 0) return new Map();
  const rows = await db.query<CronRunRow>(
    `SELECT DISTINCT ON (job) ${COLUMNS} FROM hookrun.cron_runs WHERE job = ANY($1::text[]) ORDER BY job, started_at DESC, id DESC`,
    [jobs],
  );
  return new Map(rows.map((row) => [row.job, row]));
}

/** Run history, newest first; `beforeId` pages back. */
export async function listCronRuns(
  db: Queryable,
  options: { job?: string; status?: CronRunStatus; limit?: number; beforeId?: number } = {},
): Promise<CronRunRow[]> {
  const limit = Math.min(Math.max(options.limit ?? 50, 1), 1000);
  return db.query<CronRunRow>(
    `SELECT ${COLUMNS} FROM hookrun.cron_runs
     WHERE ($1::text IS NULL OR job = $1) AND ($2::bigint IS NULL OR id < $2) AND ($4::text IS NULL OR status = $4)
     ORDER BY id DESC LIMIT $3`,
    [options.job ?? null, options.beforeId ?? null, limit, options.status ?? null],
  );
}

/** Whether the tick at `tick` has a run: claimed for that tick, or any run of the job started since (an outside scheduler's plain call). */
export async function tickHasRun(db: Queryable, job: string, tick: Date): Promise<boolean> {
  const rows = await db.query('SELECT 1 FROM hookrun.cron_runs WHERE job = $1 AND (scheduled_for = $2::timestamptz OR started_at >= $2::timestamptz) LIMIT 1', [
    job,
    tick,
  ]);
  return rows.length > 0;
}
