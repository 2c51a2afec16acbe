import type { Database } from '../db/database.js';
import { latestCronRuns, tickHasRun } from './run-history-sql.js';
import type { ScheduledJob } from './schedule.js';

/** A scheduled job that is behind: one tick not started in time, or no run at all for twice its interval. */
export interface OverdueJob {
  kind: 'tick_late' | 'job_stopped';
  job: string;
  /** The same for every instance that sees the same condition, so only one of them sends it. */
  key: string;
  /** What an operator reads in the alert. */
  line: string;
}

const iso = (ms: number) => new Date(ms).toISOString();
const minutes = (ms: number) => `${Math.round(ms / 60_000)} min`;

/**
 * Which scheduled jobs are behind at `now`. Only ticks after `sinceMs` count
 * (when this process began watching), so a fresh deploy does not report the
 * ticks from before it existed. The interval is the gap between the next two
 * ticks, so an irregular schedule is judged by what comes next.
 */
export async function findOverdueJobs(db: Database, scheduled: readonly ScheduledJob[], now: number, graceMs: number, sinceMs: number): Promise<OverdueJob[]> {
  const overdue: OverdueJob[] = [];
  const last = await latestCronRuns(
    db,
    scheduled.map((s) => s.job),
  );
  for (const { job, schedule } of scheduled) {
    const tick = schedule.latestBetween(sinceMs, now - graceMs);
    if (tick !== null && !(await tickHasRun(db, job, new Date(tick)))) {
      overdue.push({
        kind: 'tick_late',
        job,
        key: `tick_late:${job}:${iso(tick)}`,
        line: `${job}: the ${iso(tick)} tick has not started (${minutes(now - tick)} late)`,
      });
    }
    const [next, after] = schedule.nextRuns(2, now);
    if (!next || !after) continue;
    const interval = after.getTime() - next.getTime();
    const lastRun = last.get(job);
    const reference = Math.max(lastRun ? new Date(lastRun.startedAt).getTime() : Number.NEGATIVE_INFINITY, sinceMs);
    if (now - reference > 2 * interval) {
      const since = lastRun ? `last run ${iso(new Date(lastRun.startedAt).getTime())}` : 'never run';
      overdue.push({
        kind: 'job_stopped',
        job,
        key: `job_stopped:${job}:${lastRun?.id ?? 'never'}`,
        line: `${job}: ${since}, though it is scheduled every ${minutes(interval)}`,
      });
    }
  }
  return overdue;
}
