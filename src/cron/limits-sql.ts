import type { Queryable } from '../db/database.js';

/**
 * A job's own limits, across instances (an HTTP target's `concurrency` and
 * `rateLimit`). Read under the job's claim lock (`lockJob`), so two instances
 * never both see a free place.
 */
export interface RunLimits {
  /** At most this many `running` rows (with an unexpired lease) at once; the overlap policy does not apply. */
  concurrency?: number;
  /** At most `limit` starts per `periodMs`, evenly spaced: one start every periodMs/limit (no burst). */
  rate?: { limit: number; periodMs: number };
}

/** Why a run waits, and until when it cannot start. */
export interface LimitWait {
  /** Its slot: when it may start at the earliest (`due_at` of its `pending` row). */
  dueAt: Date;
  reason: string;
}

/** The spacing between two starts under `rate`, in ms. */
export const rateSpacingMs = (rate: NonNullable<RunLimits['rate']>): number => rate.periodMs / rate.limit;

/** How many runs of the job hold a place now: `running`, lease not expired. */
async function runningCount(tx: Queryable, job: string, now: Date): Promise<number> {
  const rows = await tx.query<{ n: string | number }>(
    `SELECT count(*) AS n FROM hookrun.cron_runs WHERE job = $1 AND status = 'running' AND expires_at > $2::timestamptz`,
    [job, now],
  );
  return Number(rows[0]?.n ?? 0);
}

/** When the job's latest run actually started (a row that ran or runs: not `pending`, not `skipped`); the rate's state. */
async function lastStartOf(tx: Queryable, job: string): Promise<number | undefined> {
  const rows = await tx.query<{ at: Date | string }>(
    `SELECT started_at AS at FROM hookrun.cron_runs WHERE job = $1 AND status IN ('running', 'succeeded', 'failed')
     ORDER BY started_at DESC LIMIT 1`,
    [job],
  );
  return rows[0] ? new Date(rows[0].at).getTime() : undefined;
}

/** The `due_at` of the job's `pending` runs, in the order they start: the queue a new run joins. */
async function queueOf(tx: Queryable, job: string): Promise<number[]> {
  const rows = await tx.query<{ at: Date | string }>(
    `SELECT due_at AS at FROM hookrun.cron_runs WHERE job = $1 AND status = 'pending' ORDER BY due_at, scheduled_for NULLS LAST, id`,
    [job],
  );
  return rows.map((r) => new Date(r.at).getTime());
}

const instant = (ms: number) => new Date(ms).toISOString();

/**
 * Whether a new run may start at `now` under the limits (call under
 * `lockJob`): undefined if it may, else when and why it waits. It joins the
 * job's queue of `pending` runs: those due now each take a place under
 * `concurrency`; under `rate` (GCRA without burst: each start at least
 * period/limit after the one before) the runs due before its slot each take
 * one, so its slot is the first free one after the last start and theirs.
 */
export async function waitForLimits(tx: Queryable, job: string, now: Date, limits: RunLimits): Promise<LimitWait | undefined> {
  const queue = await queueOf(tx, job);
  let dueAt = now.getTime();
  let reason: string | undefined;
  if (limits.rate) {
    const spacing = rateSpacingMs(limits.rate);
    let slot = (await lastStartOf(tx, job)) ?? Number.NEGATIVE_INFINITY;
    const after = (start: number) => Math.max(now.getTime(), Math.ceil(start + spacing)); // whole ms, as the clock gives starts
    for (const due of queue) {
      if (due > after(slot)) break; // due after our slot: it waits behind us
      slot = Math.max(due, slot + spacing);
    }
    dueAt = after(slot);
    if (dueAt > now.getTime()) reason = `rate limit (${limits.rate.limit} per ${limits.rate.periodMs} ms): it starts at ${instant(dueAt)} at the earliest`;
  }
  if (limits.concurrency !== undefined) {
    const running = await runningCount(tx, job, now);
    const ahead = queue.filter((due) => due <= now.getTime()).length;
    if (running + ahead >= limits.concurrency)
      reason = `${running} of at most ${limits.concurrency} running (concurrency)${ahead ? ` and ${ahead} waiting ahead` : ''}: it starts when a place frees up${reason ? `, and by the ${reason}` : ''}`;
  }
  return reason === undefined ? undefined : { dueAt: new Date(dueAt), reason };
}

/**
 * Whether the job's oldest due `pending` run may start at `now` (call under
 * `lockJob`): true, or false with the earliest time the rate allows a start
 * (undefined when it waits for a place under `concurrency`: a run's end wakes it).
 */
export async function mayStartPending(tx: Queryable, job: string, now: Date, limits: RunLimits): Promise<{ ok: boolean; retryAt?: Date }> {
  if (limits.concurrency !== undefined && (await runningCount(tx, job, now)) >= limits.concurrency) return { ok: false };
  if (limits.rate) {
    const last = await lastStartOf(tx, job);
    const next = last === undefined ? now.getTime() : Math.ceil(last + rateSpacingMs(limits.rate));
    if (next > now.getTime()) return { ok: false, retryAt: new Date(next) };
  }
  return { ok: true };
}
