import type { RunLimits } from './limits-sql.js';
import type { CronRunRow } from './runs-sql.js';
import type { CatchUpPolicy, OverlapPolicy } from '../api/define-job.js';

/** A job as `cron list`, the admin API and the dashboard show it. */
export interface JobStatus {
  name: string;
  path: string;
  description: string;
  /** The platform.json expression, or null when only HTTP/CLI run it. */
  schedule: string | null;
  /** The IANA zone the expression is read in (UTC unless the entry or the job file names one). */
  timezone: string;
  nextRuns: Date[];
  lastRun: CronRunRow | null;
  timeoutMs: number;
  overlap: OverlapPolicy;
  /** An HTTP target's concurrency and rate limit, or null. */
  limits: RunLimits | null;
  catchUp: CatchUpPolicy;
  /** Attempts per tick, the first included (1: no retries). */
  attempts: number;
  /** Since when its scheduled ticks are skipped (`hookrun cron pause`), or null. */
  pausedAt: Date | null;
}
