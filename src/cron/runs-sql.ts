import type { Database, Queryable } from '../db/database.js';
import { waitForLimits, type RunLimits } from './limits-sql.js';

/** What started a run; the `trigger` column of `cron_runs`, read by operators' queries, so its values do not change (docs/design.md). */
export type CronTrigger = 'schedule' | 'http' | 'cli';

/** The `status` column of `cron_runs`: `pending` (waits for `due_at`) → `running` → `succeeded` | `failed`, or `skipped` at once. */
export type CronRunStatus = 'pending' | 'running' | 'succeeded' | 'failed' | 'skipped';

/** One `cron_runs` row as the admin API, the CLI and the tests read it. */
export interface CronRunRow {
  id: number;
  job: string;
  trigger: CronTrigger;
  scheduledFor: Date | null;
  startedAt: Date;
  finishedAt: Date | null;
  status: CronRunStatus;
  error: string | null;
  durationMs: number | null;
  expiresAt: Date | null;
  /** 1 for a tick's first run, then each retry. */
  attempt: number;
  /** A retry's first run. */
  retryOf: number | null;
  /** When a `pending` run is due. */
  dueAt: Date | null;
  /** `<hostname>:<pid>` of the process that ran it. */
  instance: string | null;
  /** The last lines the job logged (50 lines, 8 KB); null when it logged nothing. */
  output: string | null;
}

/** The columns of a `CronRunRow`, for every query that reads one. */
export const COLUMNS = `id, job, trigger, scheduled_for AS "scheduledFor", started_at AS "startedAt", finished_at AS "finishedAt",
  status, error, duration_ms AS "durationMs", expires_at AS "expiresAt", attempt, retry_of AS "retryOf", due_at AS "dueAt", instance, output`;

/** Advisory-lock class of the per-job claim; the second key is hashtext(job). */
const CLAIM_LOCK_CLASS = 7_340_022;

/** What a run asks for when it starts. */
export interface ClaimInput {
  job: string;
  trigger: CronTrigger;
  /** The schedule tick; unique per job, so N instances claim it once. Null for manual runs. */
  scheduledFor: Date | null;
  startedAt: Date;
  /** A `running` row past this time no longer blocks the job (its instance died). */
  expiresAt: Date;
  /** Record `skipped` if another run of the job is `running` (overlap policy `skip`). */
  skipIfRunning: boolean;
  /** This process already knows the job still runs (e.g. past its timeout): skip without asking. */
  busyHere: boolean;
  /** Overlap `queue-one`: while a run is going, the tick waits as `pending` (one at most) instead of being skipped. */
  queueIfRunning: boolean;
  /** `<hostname>:<pid>`. */
  instance: string;
  /** The job's retry policy, for a crashed run this claim finds expired. */
  retry?: RetryRule;
  /** The job's concurrency and rate (an HTTP target's): a run over them waits as `pending`, due at its slot (with `concurrency` the runner sets no overlap flag). */
  limits?: RunLimits;
}

/** The outcome of a claim: we run it, it waits (behind a running one, or for its limits), we recorded a skip, or another instance owns this tick. */
export type ClaimResult =
  | { kind: 'started'; id: number }
  | { kind: 'queued'; id: number; dueAt: Date; reason?: string }
  | { kind: 'skipped'; id: number; reason: string }
  | { kind: 'taken' };

/** A job's retry policy as the database needs it: attempts in all (the first included), and the wait after failed attempt n. */
export interface RetryRule {
  attempts: number;
  delayMs(attempt: number): number;
}

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
    [
      runs.map((r) => r.job),
      runs.map((r) => r.trigger),
      runs.map((r) => r.scheduledFor),
      runs.map((r) => r.attempt),
      runs.map((r) => r.retryOf),
      runs.map((r) => r.dueAt),
    ],
  );
  return rows.map((r) => Number(r.id));
}

/** The next attempt of a failed scheduled run, when its policy has one left; null otherwise. */
export function retryOf(
  run: { id: number; job: string; trigger: CronTrigger; scheduledFor: Date | null; attempt: number; retryOf: number | null },
  rule: RetryRule | undefined,
  failedAt: Date,
): PendingRun | null {
  if (!rule || run.trigger !== 'schedule' || run.attempt >= rule.attempts) return null;
  const dueAt = new Date(failedAt.getTime() + rule.delayMs(run.attempt));
  return { job: run.job, trigger: run.trigger, scheduledFor: run.scheduledFor, attempt: run.attempt + 1, retryOf: run.retryOf ?? run.id, dueAt };
}

/**
 * Take the per-job lock and fail `running` rows whose instance died (past
 * `expires_at`), queueing each one's next attempt by `retry` in the same
 * transaction: the lock and the unique (job, tick, attempt) key make that
 * retry once however many instances see the row expire.
 */
export async function lockJob(tx: Queryable, job: string, now: Date, retry?: RetryRule): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [CLAIM_LOCK_CLASS, job]);
  const abandoned = await tx.query<{
    id: string | number;
    trigger: CronTrigger;
    scheduledFor: Date | string | null;
    attempt: number;
    retryOf: string | number | null;
    expiresAt: Date | string;
  }>(
    `UPDATE hookrun.cron_runs SET status = 'failed', finished_at = expires_at,
       error = 'abandoned: the instance running it stopped before it finished (no result after its timeout)'
     WHERE job = $1 AND status = 'running' AND expires_at <= $2
     RETURNING id, trigger, scheduled_for AS "scheduledFor", attempt, retry_of AS "retryOf", expires_at AS "expiresAt"`,
    [job, now],
  );
  const retries = abandoned.flatMap((r) => {
    const run = {
      id: Number(r.id),
      job,
      trigger: r.trigger,
      scheduledFor: r.scheduledFor === null ? null : new Date(r.scheduledFor),
      attempt: Number(r.attempt),
      retryOf: r.retryOf === null ? null : Number(r.retryOf),
    };
    return retryOf(run, retry, new Date(r.expiresAt)) ?? [];
  });
  await enqueueRuns(tx, retries);
}

/** The id of a `running` run of the job, if any (call under `lockJob`). */
export async function runningRunOf(tx: Queryable, job: string): Promise<number | undefined> {
  const rows = await tx.query<{ id: string | number }>(
    `SELECT id FROM hookrun.cron_runs WHERE job = $1 AND status = 'running' ORDER BY started_at DESC LIMIT 1`,
    [job],
  );
  return rows[0] ? Number(rows[0].id) : undefined;
}

/**
 * Start a run atomically: under a per-job advisory lock, expire crashed
 * `running` rows, check pause, overlap and the job's limits (over them the
 * run waits as `pending`, due at its rate slot), then insert the row with
 * `ON CONFLICT (job, scheduled_for, attempt) DO NOTHING`, the claim that makes
 * a tick run exactly once however many instances tick (graphile-worker's cron
 * model). A paused job's scheduled tick is recorded `skipped` with the reason.
 */
export async function claimCronRun(db: Database, input: ClaimInput): Promise<ClaimResult> {
  return db.transaction(async (tx) => {
    await lockJob(tx, input.job, input.startedAt, input.retry);
    let reason: string | undefined;
    let queue = false;
    const paused = input.trigger === 'schedule' && (await tx.query('SELECT 1 FROM hookrun.cron_pauses WHERE job = $1', [input.job])).length > 0;
    if (paused) reason = `paused: scheduled ticks are skipped until \`hookrun cron resume ${input.job}\``;
    else if (input.busyHere && !input.queueIfRunning) reason = 'already running in this instance (a previous run has not returned yet)';
    else if (input.skipIfRunning || input.queueIfRunning) {
      const running = input.busyHere ? -1 : await runningRunOf(tx, input.job);
      if (running !== undefined && input.queueIfRunning) {
        const waiting = await tx.query<{ id: number }>(`SELECT id FROM hookrun.cron_runs WHERE job = $1 AND status = 'pending' LIMIT 1`, [input.job]);
        if (waiting[0]) reason = `already running, and run ${waiting[0].id} already waits behind it (overlap "queue-one")`;
        else queue = true;
      } else if (running !== undefined) reason = `already running${running > 0 ? ` (run ${running})` : ''}`;
    }
    let dueAt = input.startedAt;
    const wait = reason === undefined && !queue && input.limits ? await waitForLimits(tx, input.job, input.startedAt, input.limits) : undefined;
    if (wait) [queue, dueAt] = [true, wait.dueAt];
    const status = reason !== undefined ? 'skipped' : queue ? 'pending' : 'running';
    const rows = await tx.query<{ id: number }>(
      `INSERT INTO hookrun.cron_runs (job, trigger, scheduled_for, started_at, status, expires_at, finished_at, duration_ms, error, due_at, instance)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
       ON CONFLICT (job, scheduled_for, attempt) DO NOTHING
       RETURNING id`,
      status === 'running'
        ? [input.job, input.trigger, input.scheduledFor, input.startedAt, status, input.expiresAt, null, null, null, null, input.instance]
        : status === 'pending'
          ? [input.job, input.trigger, input.scheduledFor, input.startedAt, status, null, null, null, null, dueAt, null]
          : [input.job, input.trigger, input.scheduledFor, input.startedAt, status, null, input.startedAt, 0, reason, null, input.instance],
    );
    const id = rows[0]?.id === undefined ? undefined : Number(rows[0].id);
    if (id === undefined) return { kind: 'taken' } as const;
    if (status === 'skipped') return { kind: 'skipped', id, reason: reason! } as const;
    return status === 'pending' ? ({ kind: 'queued', id, dueAt, reason: wait?.reason } as const) : ({ kind: 'started', id } as const);
  });
}

/**
 * Settle a run with its outcome and, when it failed with an attempt left,
 * queue that retry in the same transaction: both are written or neither (the
 * row then stays `running` until it expires, and the instance that sees it
 * expire queues the retry). Also over an `abandoned` mark another instance
 * made after the timeout: a success then withdraws the retry that mark
 * queued, unless it has started.
 */
export async function settleCronRun(
  db: Database,
  run: { id: number; job: string; scheduledFor: Date | null; attempt: number },
  outcome: { status: 'succeeded' | 'failed'; error: string | null; finishedAt: Date; durationMs: number; output?: string | null },
  retry: PendingRun | null,
): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query(
      `UPDATE hookrun.cron_runs SET status = $2, error = $3, finished_at = $4, duration_ms = $5, expires_at = NULL, output = $6
       WHERE id = $1`,
      [run.id, outcome.status, outcome.error, outcome.finishedAt, outcome.durationMs, outcome.output ?? null],
    );
    if (retry) await enqueueRuns(tx, [retry]);
    else if (outcome.status === 'succeeded' && run.scheduledFor) {
      await tx.query(`DELETE FROM hookrun.cron_runs WHERE job = $1 AND scheduled_for = $2 AND attempt = $3 AND status = 'pending'`, [
        run.job,
        run.scheduledFor,
        run.attempt + 1,
      ]);
    }
  });
}
