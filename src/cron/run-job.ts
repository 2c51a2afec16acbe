import { claimCronRun, retryOf, settleCronRun, type CronTrigger, type RetryRule } from './runs-sql.js';
import { AppError, messageOf } from '../errors.js';
import { overlapFlags, retryDelayMs, type ResolvedJob } from './job.js';
import { captureRunLog } from './run-output.js';
import { unknownJobMessage } from './registry.js';
import { endRunSpan, startRunSpan } from './run-span.js';
import { INSTANCE, type CronRunResult, type RunnerDeps, type StartedRun } from './runner-deps.js';

/** Abort reason when a job outlives its timeout. */
export class JobTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`timed out after ${timeoutMs} ms`);
    this.name = 'JobTimeoutError';
  }
}

const MAX_ERROR_CHARS = 2000;

/** A job's retry policy as the database applies it (to a failed run, and to one whose instance died). */
export function retryRule(definition: ResolvedJob): RetryRule {
  return { attempts: definition.retries.attempts, delayMs: (attempt) => retryDelayMs(definition.retries, attempt) };
}

function untilAborted(signal: AbortSignal): { promise: Promise<never>; dispose(): void } {
  let onAbort = () => undefined as void;
  const promise = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason instanceof Error ? signal.reason : new Error(`aborted: ${String(signal.reason)}`));
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  promise.catch(() => undefined);
  return { promise, dispose: () => signal.removeEventListener('abort', onAbort) };
}

/**
 * Runs jobs and records each run as one `cron_runs` row: claim (overlap and
 * exactly-once are decided in the database), run with a timeout that aborts
 * the job's signal, settle the row, count it in metrics.
 */
export class JobRunner {
  /** Executions not yet returned, per job (a timed-out job may still be running). */
  private readonly busy = new Map<string, number>();
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly controllers = new Set<AbortController>();

  constructor(private readonly deps: RunnerDeps) {}

  /** Claim and start a run. Null when the tick was already claimed by another instance. */
  async start(job: string, trigger: CronTrigger, options: { scheduledFor?: Date; signal?: AbortSignal } = {}): Promise<StartedRun | null> {
    const { db, jobs, clock, metrics } = this.deps;
    const definition = jobs.get(job);
    if (!definition) throw new AppError('not_found', unknownJobMessage(job, jobs));
    const startedAt = new Date(clock.now());
    const scheduledFor = options.scheduledFor ?? null;
    let claim;
    try {
      claim = await claimCronRun(db, {
        job,
        trigger,
        scheduledFor,
        startedAt,
        expiresAt: new Date(startedAt.getTime() + definition.timeoutMs),
        ...overlapFlags(definition, (this.busy.get(job) ?? 0) > 0),
        instance: INSTANCE,
        retry: retryRule(definition),
        limits: definition.limits,
      });
    } catch (error) {
      throw new AppError('unavailable', `Cannot record a run of "${job}": the database is unavailable (${messageOf(error)}). Retry later.`, { cause: error });
    }
    if (claim.kind === 'taken') return null;
    const base = { id: claim.id, job, trigger, scheduledFor, startedAt, attempt: 1, retryOf: null };
    if (claim.kind === 'queued') {
      this.deps.log.info(
        { job, trigger, runId: claim.id, reason: claim.reason },
        `cron run queued ${claim.reason ? 'by its limits' : 'behind the running one (overlap "queue-one")'}`,
      );
      const waiting = claim.reason;
      if (waiting) this.deps.onRunQueued?.(job, claim.dueAt); // its limits hold it: look again at its slot
      const result: CronRunResult = { ...base, status: 'queued', error: null, finishedAt: startedAt, durationMs: 0, ...(waiting && { waiting }) };
      return { id: claim.id, status: 'queued', done: Promise.resolve(result) };
    }
    if (claim.kind === 'skipped') {
      metrics.cronRuns.inc({ job, trigger, status: 'skipped' });
      this.deps.log.info({ job, trigger, runId: claim.id, reason: claim.reason }, 'cron run skipped');
      const result: CronRunResult = { ...base, status: 'skipped', error: claim.reason, finishedAt: startedAt, durationMs: 0 };
      return { id: claim.id, status: 'skipped', done: Promise.resolve(result) };
    }
    if (scheduledFor) metrics.cronLag.observe({ job }, Math.max(0, startedAt.getTime() - scheduledFor.getTime()) / 1000);
    const done = this.execute(definition, base, options.signal);
    return { id: claim.id, status: 'running', done };
  }

  /** Run once and wait for the outcome (HTTP and CLI runs). */
  async run(job: string, trigger: CronTrigger, signal?: AbortSignal): Promise<CronRunResult> {
    const started = await this.start(job, trigger, { signal });
    if (!started) throw new Error('unreachable: a manual run has no tick to lose');
    return started.done;
  }

  /** Whether any execution of `job` is still going in this process. */
  isBusy(job: string): boolean {
    return (this.busy.get(job) ?? 0) > 0;
  }

  /** Wait until every run in this process has returned and been recorded, or `timeoutMs` passes. */
  async drain(timeoutMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    const all = (async () => {
      while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
      return true as const;
    })();
    try {
      return await Promise.race([all, deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Abort every running job's signal (shutdown past its bound). */
  abortAll(reason: string): void {
    for (const controller of this.controllers) controller.abort(new Error(reason));
  }

  /** Run a row already made `running` for this instance (a pending run started by pending-runs.ts). */
  runClaimed(row: {
    id: number;
    job: string;
    trigger: CronTrigger;
    scheduledFor: Date | null;
    startedAt: Date;
    attempt: number;
    retryOf: number | null;
  }): Promise<CronRunResult> {
    const definition = this.deps.jobs.get(row.job);
    if (!definition) throw new AppError('not_found', unknownJobMessage(row.job, this.deps.jobs));
    return this.execute(definition, row);
  }

  private execute(
    definition: ResolvedJob,
    base: Omit<CronRunResult, 'status' | 'error' | 'finishedAt' | 'durationMs'> & { retryOf: number | null },
    outer?: AbortSignal,
  ): Promise<CronRunResult> {
    const { db, clock, log, metrics } = this.deps;
    const { job, trigger } = base;
    const controller = new AbortController();
    const onOuterAbort = () => controller.abort(outer?.reason ?? new Error('aborted'));
    if (outer?.aborted) onOuterAbort();
    else outer?.addEventListener('abort', onOuterAbort, { once: true });
    const timer = setTimeout(() => controller.abort(new JobTimeoutError(definition.timeoutMs)), definition.timeoutMs);
    const t0 = performance.now();
    const runLog = log.child({ job, runId: base.id, trigger });
    const captured = captureRunLog(runLog); // what the job logs is also kept for its row (cron_runs.output)
    runLog.info('cron run started');
    const span = startRunSpan(metrics.tracer, base);

    this.busy.set(job, (this.busy.get(job) ?? 0) + 1);
    this.controllers.add(controller);
    const execution = (async () =>
      definition.run({
        db,
        config: this.deps.config,
        stripe: this.deps.stripe,
        signal: controller.signal,
        log: captured.log,
        clock,
        now: base.startedAt,
        trigger,
        scheduledFor: base.scheduledFor,
        runId: base.id,
        traceHeaders: () => span?.traceHeaders() ?? {},
      }))();
    const returned = execution
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => {
        this.busy.set(job, (this.busy.get(job) ?? 1) - 1);
        this.controllers.delete(controller);
        clearTimeout(timer);
        outer?.removeEventListener('abort', onOuterAbort);
      });
    this.track(returned);

    const aborted = untilAborted(controller.signal);
    const done = (async (): Promise<CronRunResult> => {
      let error: string | null = null;
      try {
        await Promise.race([execution, aborted.promise]);
      } catch (thrown) {
        error = messageOf(thrown).slice(0, MAX_ERROR_CHARS) || 'failed without a message';
      } finally {
        aborted.dispose();
        clearTimeout(timer);
      }
      const status = error === null ? 'succeeded' : 'failed';
      const durationMs = Math.max(0, Math.round(performance.now() - t0));
      const finishedAt = new Date(Math.max(clock.now(), base.startedAt.getTime()));
      const retry = error === null ? null : retryOf(base, retryRule(definition), finishedAt);
      let recorded = true;
      try {
        await settleCronRun(db, base, { status, error, finishedAt, durationMs, output: captured.output() }, retry);
      } catch (writeError) {
        recorded = false;
        runLog.error(
          { err: { message: messageOf(writeError) } },
          'cron run outcome not recorded: its row stays running until it expires, then the instance that sees it expire queues its retry (if it has attempts left)',
        );
      }
      metrics.cronRuns.inc({ job, trigger, status });
      endRunSpan(span, error);
      const retryAt = recorded ? (retry?.dueAt ?? null) : null;
      if (error === null) runLog.info({ durationMs }, 'cron run succeeded');
      else {
        runLog.warn({ durationMs, error, attempt: base.attempt, retryAt }, retryAt ? 'cron run failed; retrying later' : 'cron run failed');
        if (!retry) this.deps.onRunFailed?.({ job, trigger, error, runId: base.id });
      }
      await this.deps.onRunEnded?.(job); // before `done` settles, so drain() also waits for what it starts
      return {
        id: base.id,
        job,
        trigger,
        scheduledFor: base.scheduledFor,
        startedAt: base.startedAt,
        attempt: base.attempt,
        status,
        error,
        finishedAt,
        durationMs,
        retryAt,
        output: captured.output(),
      };
    })();
    this.track(done);
    return done;
  }

  private track(promise: Promise<unknown>): void {
    this.inFlight.add(promise);
    void promise.finally(() => this.inFlight.delete(promise)).catch(() => undefined);
  }
}
