import type { Queryable } from '../db/database.js';
import { recordSighting, type Sighting } from './issue-store.js';
import { LOOKBACK_MS } from './issue-types.js';

/** A condition counts one occurrence each time it begins (a reopening), not once per pass. */
export const ONCE_PER_OPENING = `i.occurrences + CASE WHEN i.status = 'resolved' AND EXCLUDED.last_seen_at > i.resolved_at THEN 1 ELSE 0 END`;

/** A job that is behind, as the monitor's overdue check reports it. */
export interface SilentJob {
  job: string;
  line: string;
}

/** Record each job's failed runs of the last 15 minutes as a `job_failing` issue (runs after last_seen_at are added, once across instances). */
export async function detectJobFailures(db: Queryable, now: number): Promise<number> {
  const rows = await db.query<{ job: string; n: number; first: Date | string; last: Date | string; error: string | null }>(
    `SELECT job, count(*)::int AS n, min(finished_at) AS first, max(finished_at) AS last, (array_agg(error ORDER BY finished_at DESC))[1] AS error
     FROM hookrun.cron_runs WHERE status = 'failed' AND finished_at > $1::timestamptz AND finished_at <= $2::timestamptz GROUP BY job`,
    [new Date(now - LOOKBACK_MS), new Date(now)],
  );
  for (const row of rows) {
    const sighting: Sighting = {
      fingerprint: `job_failing:${row.job}`,
      kind: 'job_failing',
      subject: row.job,
      title: `Job ${row.job} fails`,
      detail: row.error ?? 'failed without a message',
      seenAt: new Date(row.last),
      occurrences: Number(row.n),
      firstSeenAt: new Date(row.first),
    };
    const added = `(SELECT count(*)::int FROM hookrun.cron_runs r WHERE r.job = $3 AND r.status = 'failed'
      AND r.finished_at > i.last_seen_at AND r.finished_at <= $8::timestamptz)`;
    await recordSighting(db, sighting, `i.occurrences + ${added}`);
  }
  return rows.length;
}

/** Record each job the overdue check reports (a late tick, a job silent for twice its interval) as a `job_silent` issue. */
export async function recordSilentJobs(db: Queryable, jobs: readonly SilentJob[], now: number): Promise<void> {
  const lines = new Map<string, string[]>();
  for (const { job, line } of jobs) lines.set(job, [...(lines.get(job) ?? []), line]);
  for (const [job, detail] of lines) {
    const at = new Date(now);
    const sighting: Sighting = {
      fingerprint: `job_silent:${job}`,
      kind: 'job_silent',
      subject: job,
      title: `Job ${job} has not run on time`,
      detail: detail.join('\n'),
      seenAt: at,
      occurrences: 1,
      firstSeenAt: at,
    };
    await recordSighting(db, sighting, ONCE_PER_OPENING);
  }
}
