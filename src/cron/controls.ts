import type { Clock } from '../clock.js';
import { enqueueRuns, pauseJob, requeuePausedTicks, resumeJob, ticksWithRuns } from './queue-sql.js';
import type { Database } from '../db/database.js';
import { AppError } from '../errors.js';
import type { ResolvedJob } from './job.js';
import type { ScheduledJob } from './schedule.js';

/** What `pause` and `resume` answer. */
export interface PauseState {
  job: string;
  paused: boolean;
  /** True when this call changed the state (false: it was already so). */
  changed: boolean;
  /** On resume with catch-up: how many ticks skipped while paused run now. */
  caughtUp?: number;
}

/** Pause a job on every instance: its scheduled ticks are recorded `skipped` (manual runs still run). */
export async function pause(db: Database, clock: Clock, job: string): Promise<PauseState> {
  return { job, paused: true, changed: await pauseJob(db, job, new Date(clock.now())) };
}

/**
 * Resume a job. The ticks skipped while it was paused stay skipped, unless
 * `catchUp`: then they run again by its catch-up policy (`all`: up to
 * `catchUpMax` of them, oldest first; otherwise the latest one).
 */
export async function resume(db: Database, clock: Clock, job: string, definition: ResolvedJob, catchUp: boolean): Promise<PauseState> {
  const pausedAt = await resumeJob(db, job);
  if (!pausedAt) return { job, paused: false, changed: false };
  if (!catchUp) return { job, paused: false, changed: true };
  const since = definition.catchUp === 'all' ? Math.max(pausedAt.getTime(), clock.now() - definition.catchUpWindowMs) : pausedAt.getTime();
  const limit = definition.catchUp === 'all' ? definition.catchUpMax : 1;
  return { job, paused: false, changed: true, caughtUp: await requeuePausedTicks(db, job, new Date(since), new Date(clock.now()), limit) };
}

/** A backfill's plan: each tick of the range, and whether it already has a run. */
export interface BackfillPlan {
  job: string;
  from: string;
  to: string;
  ticks: Array<{ at: string; hasRun: boolean }>;
  /** Runs queued by this call (0 on a dry run). */
  queued: number;
  dryRun: boolean;
}

/** Most ticks one backfill may cover: a typo in `--from` must not queue a year of minutes. */
export const MAX_BACKFILL_TICKS = 1000;

/**
 * Run the ticks of a past range, each once: a tick that already has a run
 * (of any status) is left alone, the others are queued as `pending` scheduled
 * runs (the scheduler runs them one after another, oldest first).
 */
export async function backfill(
  db: Database,
  clock: Clock,
  entry: ScheduledJob | undefined,
  job: string,
  range: { from: Date; to: Date; dryRun: boolean },
): Promise<BackfillPlan> {
  if (!entry) throw new AppError('bad_request', `Job "${job}" has no schedule in platform.json, so it has no ticks to backfill.`);
  const now = clock.now();
  if (!(range.from.getTime() < range.to.getTime())) throw new AppError('bad_request', '--from must be before --to.');
  if (range.to.getTime() > now) throw new AppError('bad_request', `--to is in the future (${range.to.toISOString()}); backfill runs past ticks only.`);
  const ticks: Date[] = [];
  for (let at = entry.schedule.next(range.from.getTime() - 1); at !== null && at <= range.to.getTime(); at = entry.schedule.next(at)) {
    ticks.push(new Date(at));
    if (ticks.length > MAX_BACKFILL_TICKS)
      throw new AppError(
        'bad_request',
        `The range has more than ${MAX_BACKFILL_TICKS} ticks of "${entry.schedule.expression}"; backfill a shorter range at a time.`,
      );
  }
  const done = await ticksWithRuns(db, job, ticks);
  const missing = ticks.filter((t) => !done.has(t.getTime()));
  const queued = range.dryRun
    ? 0
    : (
        await enqueueRuns(
          db,
          missing.map((at) => ({ job, trigger: 'schedule' as const, scheduledFor: at, attempt: 1, retryOf: null, dueAt: new Date(now) })),
        )
      ).length;
  return {
    job,
    from: range.from.toISOString(),
    to: range.to.toISOString(),
    ticks: ticks.map((t) => ({ at: t.toISOString(), hasRun: done.has(t.getTime()) })),
    queued,
    dryRun: range.dryRun,
  };
}
