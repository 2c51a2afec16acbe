import type { Context, Hono } from 'hono';
import { systemClock, type Clock } from '../clock.js';
import type { Config } from '../config/config.js';
import type { StripeApi } from '../payments-api/stripe-client.js';
import type { Database } from '../db/database.js';
import { pausedJobs } from './queue-sql.js';
import { latestCronRuns, listCronRuns } from './run-history-sql.js';
import type { CronRunRow, CronRunStatus, CronTrigger } from './runs-sql.js';
import { AppError, messageOf } from '../errors.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { ResolvedJob } from './job.js';
import type { JobStatus } from './job-status.js';
import { displayPath } from '../module-files.js';
import { loadAllJobs, unknownJobMessage, type JobRegistry } from './registry.js';
import { withHttpTargets } from './http-target.js';
import { backfill, pause, resume, type BackfillPlan, type PauseState } from './controls.js';
import { findOverdueJobs, type OverdueJob } from './overdue.js';
import { rateWaker, startDueRuns } from './pending-runs.js';
import { createCronRoutes, type ScheduledDelivery } from './routes.js';
import { JobRunner } from './run-job.js';
import type { CronRunResult, RunnerDeps } from './runner-deps.js';
import { deliveredSchedule, validateCrons, type ScheduledJob } from './schedule.js';
import { DEFAULT_TIME_ZONE } from './time-zone.js';
import { Ticker, type TickerOptions, type TickOutcome } from './ticker.js';

/** A job as `cron list`, the admin API and the dashboard show it. */
export type { JobStatus } from './job-status.js';

/** What the cron capability needs from the service. */
export interface CronServiceDeps {
  config: Config;
  /** The service's Stripe API client, for jobs (`ctx.stripe`); built once where the service is assembled. */
  stripe?: StripeApi;
  db: Database;
  log: Logger;
  metrics: Metrics;
  clock?: Clock;
  /** Jobs to use instead of discovering src/cron/jobs (tests). */
  jobs?: JobRegistry;
  ticker?: TickerOptions;
  /** Told of each failed run (alerts). */
  onRunFailed?: RunnerDeps['onRunFailed'];
  /** Caller IP for the loopback rule (CRON_LOCAL_CALLERS=allow without CRON_SECRET; tests); defaults to the socket's. */
  remoteAddress?: (c: Context) => string | undefined;
}

/** The one entry point of the cron capability, wired by service.ts, app.ts and the CLI. */
export interface CronService {
  /** Mount at `/cron`. */
  routes: Hono;
  jobs: JobRegistry;
  /** Check platform.json against the jobs: throws ConfigError, returns warnings (log them). */
  validate(): string[];
  /** Validate, then tick on a timer until `stop()`. */
  startScheduler(): void;
  /** One scheduler pass at `clock.now()` (tests; the timer calls it too). */
  tick(): Promise<TickOutcome[]>;
  /** Run a job once and wait for its recorded outcome; throws AppError not_found / unavailable. */
  runJob(name: string, trigger: CronTrigger, signal?: AbortSignal): Promise<CronRunResult>;
  /** Every job with its schedule, next 3 runs (UTC) and last run. */
  listJobs(count?: number): Promise<JobStatus[]>;
  /** The next `count` runs of a scheduled job; [] when it has no schedule. */
  nextRuns(name: string, count: number, fromMs?: number): Date[];
  /** Run history, newest first. */
  listRuns(options?: { job?: string; status?: CronRunStatus; limit?: number; beforeId?: number }): Promise<CronRunRow[]>;
  /** Pause a job on every instance (stored in the database; survives restarts). */
  pause(name: string): Promise<PauseState>;
  /** Resume it; the ticks skipped while paused run only with `catchUp`. */
  resume(name: string, options?: { catchUp?: boolean }): Promise<PauseState>;
  /** Queue the ticks of a past range that have no run (each once); `dryRun` only lists them. */
  backfill(name: string, range: { from: Date; to: Date; dryRun: boolean }): Promise<BackfillPlan>;
  /** Start the pending runs that are due, in this process (the CLI's backfill when no server runs); how many started. */
  runDue(name?: string): Promise<number>;
  /** Scheduled jobs that are behind at `clock.now()`: a tick not started `graceMs` after its time, or no run for twice the interval. */
  overdue(graceMs: number, sinceMs: number): Promise<OverdueJob[]>;
  /** Wait until no run of this process is in flight (bounded). */
  idle(timeoutMs?: number): Promise<boolean>;
  /** Stop ticking, wait for running jobs (bounded by SHUTDOWN_TIMEOUT_MS), then abort what is left. */
  stop(): Promise<void>;
}

const ABORT_GRACE_MS = 1000;

/**
 * A scheduled delivery this early still belongs to the coming tick: the
 * sender's clock may run a little ahead of ours. Small next to any schedule's
 * interval, so a late delivery is never mistaken for the next tick's.
 */
export const SCHEDULED_DELIVERY_EARLY_MS = 5000;

/**
 * Build the cron capability: discover jobs, and give the HTTP routes, the
 * scheduler and the CLI one runner, so every run is recorded the same way.
 */
export async function createCronService(deps: CronServiceDeps): Promise<CronService> {
  const { config, db, log, metrics } = deps;
  const clock = deps.clock ?? systemClock;
  const jobs = withHttpTargets(deps.jobs ?? (await loadAllJobs(config.projectDir, config.environment)), config);
  const startWaiting = (job: string) =>
    (ticker && !stopping ? startDueRuns(pending, job) : Promise.resolve()).catch((error: unknown) =>
      log.warn({ job, err: { message: messageOf(error) } }, 'could not start the run waiting behind this one; the scheduler tries again'),
    );
  const waker = rateWaker(startWaiting, clock, () => ticker !== undefined && !stopping);
  const runner: JobRunner = new JobRunner({
    ...{ config, stripe: deps.stripe, db, jobs, clock, log, metrics, onRunFailed: deps.onRunFailed },
    ...{ onRunEnded: startWaiting, onRunQueued: waker.wakeAt },
  });
  const pending = { db, jobs, clock, runner, log, wakeAt: waker.wakeAt };
  let validated: { scheduled: ScheduledJob[]; warnings: string[] } | undefined;
  let ticker: Ticker | undefined;
  let stopping: Promise<void> | undefined;

  const known = (name: string) => {
    if (!jobs.has(name)) throw new AppError('not_found', unknownJobMessage(name, jobs));
    return name;
  };
  const validate = () => (validated ??= validateCrons(config.crons, jobs, displayPath(config.platformConfigPath)));
  const scheduleOf = (name: string) => validate().scheduled.find((s) => s.job === name);
  const getTicker = () =>
    (ticker ??= new Ticker(
      {
        entries: validate().scheduled.map((s) => {
          const { catchUp, catchUpWindowMs, catchUpMax } = jobs.get(s.job) as ResolvedJob;
          return { job: s.job, schedule: s.schedule, catchUp, catchUpWindowMs, catchUpMax };
        }),
        runner,
        db,
        clock,
        log,
        startDue: () => startDueRuns(pending),
      },
      deps.ticker,
    ));

  /**
   * A scheduled delivery (Vercel Cron, Vercel Schedules) runs the job's latest
   * due tick, once: the same claim the built-in scheduler makes. The tick comes
   * from platform.json's entry (its time zone included), else from the
   * expression the delivery names (`x-vercel-cron-schedule`, UTC), so every
   * delivery of one occurrence finds the same tick.
   */
  const runScheduled = async (job: string, delivered: ScheduledDelivery): Promise<CronRunResult | 'duplicate'> => {
    const schedule = scheduleOf(job)?.schedule ?? deliveredSchedule(delivered.expression);
    const tick = schedule?.latestBetween(Number.NEGATIVE_INFINITY, clock.now() + SCHEDULED_DELIVERY_EARLY_MS);
    if (tick === undefined || tick === null) {
      log.warn(
        { job },
        `scheduled delivery for a job with no ${displayPath(config.platformConfigPath)} entry: run as a manual call (add the entry so repeats of a tick run once)`,
      );
      return runner.run(job, 'http');
    }
    const started = await runner.start(job, 'schedule', { scheduledFor: new Date(tick) });
    if (!started) {
      log.info({ job, scheduledFor: new Date(tick).toISOString() }, 'scheduled delivery repeated: this tick already has its run');
      return 'duplicate';
    }
    return started.done;
  };

  const routes = createCronRoutes({
    jobs,
    cronSecret: config.cronSecret,
    cronSecretProblem: config.cronSecretProblem,
    localCallers: config.cronLocalCallers,
    remoteAddress: deps.remoteAddress,
    run: (job) => runner.run(job, 'http'),
    runScheduled,
  });

  return {
    routes,
    jobs,
    validate: () => [...validate().warnings],
    startScheduler() {
      if (stopping) return;
      const entries = validate().scheduled;
      log.info(
        { jobs: entries.map((s) => `${s.job} "${s.schedule.expression}" (${s.schedule.timezone})`) },
        entries.length ? 'scheduler started' : 'scheduler started with no crons in platform.json',
      );
      getTicker().start();
    },
    tick: () => getTicker().tick(),
    runJob(name, trigger, signal) {
      if (!jobs.has(name)) return Promise.reject(new AppError('not_found', unknownJobMessage(name, jobs)));
      return runner.run(name, trigger, signal);
    },
    async listJobs(count = 3) {
      const names = [...jobs.keys()].sort();
      const [last, paused] = await Promise.all([latestCronRuns(db, names), pausedJobs(db)]);
      return names.map((name) => {
        const definition = jobs.get(name)!;
        const scheduled = scheduleOf(name);
        return {
          name,
          path: `/cron/${name}`,
          description: definition.description,
          schedule: scheduled?.schedule.expression ?? null,
          timezone: scheduled?.schedule.timezone ?? definition.timezone ?? DEFAULT_TIME_ZONE,
          nextRuns: scheduled ? scheduled.schedule.nextRuns(count, clock.now()) : [],
          lastRun: last.get(name) ?? null,
          timeoutMs: definition.timeoutMs,
          overlap: definition.overlap,
          limits: definition.limits ?? null,
          catchUp: definition.catchUp,
          attempts: definition.retries.attempts,
          pausedAt: paused.get(name) ?? null,
        };
      });
    },
    nextRuns(name, count, fromMs = clock.now()) {
      if (!jobs.has(name)) throw new AppError('not_found', unknownJobMessage(name, jobs));
      return scheduleOf(name)?.schedule.nextRuns(count, fromMs) ?? [];
    },
    listRuns: (options) => listCronRuns(db, options),
    pause: (name) => pause(db, clock, known(name)),
    resume: (name, options = {}) => resume(db, clock, known(name), jobs.get(name)!, options.catchUp === true),
    backfill: (name, range) => backfill(db, clock, scheduleOf(known(name)), name, range),
    runDue: (name) => startDueRuns(pending, name),
    overdue: (graceMs, sinceMs) => findOverdueJobs(db, validate().scheduled, clock.now(), graceMs, sinceMs),
    idle: (timeoutMs = config.shutdownTimeoutMs) => runner.drain(timeoutMs),
    stop: () =>
      (stopping ??= (async () => {
        await ticker?.stop();
        waker.stop();
        if (!(await runner.drain(config.shutdownTimeoutMs))) {
          log.warn({ timeoutMs: config.shutdownTimeoutMs }, 'cron jobs still running at shutdown: aborting them');
          runner.abortAll('aborted: hookrun is shutting down');
          await runner.drain(ABORT_GRACE_MS);
        }
      })()),
  };
}
