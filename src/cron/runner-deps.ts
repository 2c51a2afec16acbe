import { hostname } from 'node:os';
import type { Clock } from '../clock.js';
import type { Config } from '../config/config.js';
import type { CronTrigger } from './runs-sql.js';
import type { Database } from '../db/database.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { StripeApi } from '../payments-api/stripe-client.js';
import type { JobRegistry } from './registry.js';
import type { RunOutput } from './run-output.js';

/** The outcome of one run, as recorded in its `cron_runs` row. */
export interface CronRunResult extends RunOutput {
  id: number;
  job: string;
  trigger: CronTrigger;
  /** `queued`: overlap `queue-one` put it behind the running one, or its limits hold it (`pending`); it runs when it may. */
  status: 'succeeded' | 'failed' | 'skipped' | 'queued';
  error: string | null;
  scheduledFor: Date | null;
  startedAt: Date;
  finishedAt: Date;
  durationMs: number;
  /** 1, or the retry's number. */
  attempt: number;
  /** When a failed scheduled run will be tried again (retry policy); null otherwise. */
  retryAt?: Date | null;
  /** `queued` by the job's concurrency or rate limit: why it waits (and from when it may start). */
  waiting?: string;
}

/** Who ran a run, in `cron_runs.instance`: enough to find the process's logs. */
export const INSTANCE = `${hostname()}:${process.pid}`;

/** A claimed run: already `skipped`, or `running` with `done` settling when its row is written. */
export interface StartedRun {
  id: number;
  status: 'running' | 'skipped' | 'queued';
  done: Promise<CronRunResult>;
}

/** What the runner needs; the same for schedule, HTTP and CLI runs. */
export interface RunnerDeps {
  config: Config;
  /** Handed to each job as `ctx.stripe`: built once by whoever assembles the service. */
  stripe?: StripeApi;
  db: Database;
  jobs: JobRegistry;
  clock: Clock;
  log: Logger;
  metrics: Metrics;
  /** Told of each failed run that will not be retried, once its outcome is recorded (alerts). Must not throw or block. */
  onRunFailed?: (run: { job: string; trigger: CronTrigger; error: string; runId: number }) => void;
  /** A run of the job just ended here: start what waits behind it (overlap `queue-one`, catch-up, retries). */
  onRunEnded?: (job: string) => Promise<unknown>;
  /** A run was queued as `pending`, due at `dueAt` (its rate slot, or now): look again then. Must not throw or block. */
  onRunQueued?: (job: string, dueAt: Date) => void;
}
