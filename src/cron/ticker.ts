import { backoffMs } from '../backoff.js';
import type { Clock } from '../clock.js';
import type { Database } from '../db/database.js';
import { lastScheduledFor } from './run-history-sql.js';
import { enqueueRuns } from './queue-sql.js';
import { messageOf } from '../errors.js';
import type { Logger } from '../log.js';
import type { CatchUpPolicy } from '../api/define-job.js';
import type { JobRunner } from './run-job.js';
import type { CronSchedule } from './schedule.js';

/** One scheduled job as the ticker sees it. */
export interface TickerEntry {
  job: string;
  schedule: CronSchedule;
  catchUp: CatchUpPolicy;
  /** catchUp `all`: how far back missed ticks still run, and how many at most. */
  catchUpWindowMs?: number;
  catchUpMax?: number;
}

/** What one pass did for one job; tests and logs read it. */
export type TickOutcome =
  | { job: string; kind: 'started' | 'skipped'; scheduledFor: Date; runId: number; late: boolean }
  | { job: string; kind: 'taken'; scheduledFor: Date }
  | { job: string; kind: 'missed'; scheduledFor: Date }
  | { job: string; kind: 'caught-up'; ticks: Date[] }
  | { job: string; kind: 'error'; error: string };

/** Ticker timing; defaults suit production (1 s resolution, 60 s before a tick counts as missed). */
export interface TickerOptions {
  intervalMs?: number;
  /** A tick seen later than this after its time is "missed": catch-up `none` drops it. */
  lateToleranceMs?: number;
  maxBackoffMs?: number;
}

/** Wake this long after a tick is due, so timer jitter never wakes us just before it. */
const TICK_WAKE_MARGIN_MS = 2;

/**
 * How long the scheduler sleeps after a good pass: until the earliest next
 * tick of any job (a few ms after it, so the tick is due when it wakes), never
 * longer than `intervalMs`. Start lag stays at timer precision instead of up
 * to a whole polling interval. `after`: the job's cursor, when the pass left
 * no tick due up to it or later (its first tick after is the next one, and
 * the schedule has it at hand); else `nowMs`.
 */
export function delayToNextTick(entries: readonly { schedule: CronSchedule; after?: number }[], nowMs: number, intervalMs: number): number {
  let delay = intervalMs;
  for (const entry of entries) {
    const next = entry.schedule.next(entry.after ?? nowMs);
    if (next !== null) delay = Math.min(delay, next - nowMs + TICK_WAKE_MARGIN_MS);
  }
  return Math.max(delay, 0);
}

/** The ticks in (cursor, now] no older than the window, the newest `catchUpMax` of them, oldest first. */
function missedTicks(entry: TickerEntry, cursor: number, now: number): Date[] {
  const max = entry.catchUpMax ?? 24;
  const ticks: number[] = [];
  for (
    let at = entry.schedule.next(Math.max(cursor, now - (entry.catchUpWindowMs ?? 86_400_000) - 1));
    at !== null && at <= now;
    at = entry.schedule.next(at)
  ) {
    ticks.push(at);
    if (ticks.length > max) ticks.shift();
  }
  return ticks.map((at) => new Date(at));
}

/**
 * The built-in scheduler. Each pass looks, per job, for the latest tick since
 * the last one it handled and claims it through the runner; the unique
 * (job, scheduled_for) claim makes N instances run a tick once. After a gap
 * only the latest missed tick runs (catch-up `latest`) or none (`none`).
 * Database failures back off and never throw out of the loop.
 */
export class Ticker {
  /** Per job: every tick at or before this time has been handled (claimed, taken or dropped). */
  private readonly cursors = new Map<string, number>();
  private readonly intervalMs: number;
  private readonly lateToleranceMs: number;
  private readonly maxBackoffMs: number;
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;
  /** The wait after `failures` failed passes in a row: the interval, doubling, capped (no jitter: one loop per instance). */
  private backoff(): number {
    return backoffMs(this.failures + 1, { baseMs: this.intervalMs, maxMs: this.maxBackoffMs });
  }
  private running = false;
  private current: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly deps: {
      entries: readonly TickerEntry[];
      runner: JobRunner;
      db: Database;
      clock: Clock;
      log: Logger;
      /** After each pass: start the pending runs that are due (retries, queued and caught-up ticks). */
      startDue?: () => Promise<unknown>;
    },
    options: TickerOptions = {},
  ) {
    this.intervalMs = options.intervalMs ?? 1000;
    this.lateToleranceMs = options.lateToleranceMs ?? 60_000;
    this.maxBackoffMs = options.maxBackoffMs ?? 30_000;
  }

  /** Consecutive failed passes; the loop waits `backoff()` before the next. */
  get consecutiveFailures(): number {
    return this.failures;
  }

  /** One pass over every job at `clock.now()`. Never throws; a failed job is retried next pass. */
  async tick(): Promise<TickOutcome[]> {
    const pass = this.pass();
    this.current = pass;
    return pass;
  }

  private async pass(): Promise<TickOutcome[]> {
    const outcomes: TickOutcome[] = [];
    let failed = false;
    for (const entry of this.deps.entries) {
      try {
        const outcome = await this.tickJob(entry);
        if (outcome) outcomes.push(outcome);
      } catch (error) {
        failed = true;
        outcomes.push({ job: entry.job, kind: 'error', error: messageOf(error) });
      }
    }
    try {
      await this.deps.startDue?.();
    } catch (error) {
      if (!failed) outcomes.push({ job: '*', kind: 'error', error: messageOf(error) });
      failed = true;
    }
    if (failed) {
      this.failures += 1;
      this.deps.log.warn(
        { failures: this.failures, retryInMs: this.backoff(), errors: outcomes.filter((o) => o.kind === 'error') },
        'scheduler pass failed (database unavailable?); backing off',
      );
    } else this.failures = 0;
    return outcomes;
  }

  private async tickJob(entry: TickerEntry): Promise<TickOutcome | undefined> {
    const { runner, db, clock, log } = this.deps;
    const now = clock.now();
    let cursor = this.cursors.get(entry.job);
    if (cursor === undefined) {
      // A restarted instance resumes after the last recorded tick, so it can see what it missed.
      cursor = (await lastScheduledFor(db, entry.job))?.getTime() ?? now;
      this.cursors.set(entry.job, cursor);
    }
    const due = entry.schedule.latestBetween(cursor, now);
    if (due === null) return undefined;
    const scheduledFor = new Date(due);
    const late = now - due > this.lateToleranceMs;
    if (late && entry.catchUp === 'none') {
      this.cursors.set(entry.job, now);
      log.info({ job: entry.job, scheduledFor }, 'missed cron tick not run (catchUp "none"); waiting for the next one');
      return { job: entry.job, kind: 'missed', scheduledFor };
    }
    if (late && entry.catchUp === 'all') {
      const ticks = missedTicks(entry, cursor, now);
      await enqueueRuns(
        this.deps.db,
        ticks.map((at) => ({ job: entry.job, trigger: 'schedule' as const, scheduledFor: at, attempt: 1, retryOf: null, dueAt: new Date(now) })),
      );
      this.cursors.set(entry.job, now);
      log.info(
        { job: entry.job, ticks: ticks.length, from: ticks[0], to: ticks[ticks.length - 1] },
        'catching up: running every missed cron tick in the window, oldest first',
      );
      return { job: entry.job, kind: 'caught-up', ticks };
    }
    if (late) log.info({ job: entry.job, scheduledFor }, 'catching up: running the latest missed cron tick once');
    const started = await runner.start(entry.job, 'schedule', { scheduledFor });
    this.cursors.set(entry.job, now);
    if (!started) return { job: entry.job, kind: 'taken', scheduledFor };
    return { job: entry.job, kind: started.status === 'running' ? 'started' : 'skipped', scheduledFor, runId: started.id, late };
  }

  /** Tick on a timer until `stop()`; the delay grows while the database is down. */
  start(): void {
    if (this.running) return;
    this.running = true;
    const loop = async () => {
      if (!this.running) return;
      try {
        await this.tick();
      } catch (error) {
        this.failures += 1; // tick() does not throw; this keeps the loop alive if that ever changes
        this.deps.log.error({ err: { message: messageOf(error) } }, 'scheduler pass crashed; retrying');
      }
      if (!this.running) return;
      this.timer = setTimeout(() => void loop(), this.failures > 0 ? this.backoff() : this.delayToNextTick());
    };
    this.timer = setTimeout(() => void loop(), 0);
  }

  /** After a good pass every job's cursor has no tick due up to the pass: the first tick after it is the job's next. */
  private delayToNextTick(): number {
    const entries = this.deps.entries.map((entry) => ({ schedule: entry.schedule, after: this.cursors.get(entry.job) }));
    return delayToNextTick(entries, this.deps.clock.now(), this.intervalMs);
  }

  /** Stop ticking and wait for the pass in progress (runs it started are the runner's to drain). */
  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    await this.current.catch(() => undefined);
  }
}
