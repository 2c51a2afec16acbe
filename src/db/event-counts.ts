import type { Database } from './database.js';
import { EVENT_STATUSES, type EventStatus } from './events.js';

/** Statuses whose rows the worker still owes or an operator must look at: counted exactly on every call. */
const LIVE_STATUSES = ['pending', 'failed', 'dead'];
/** Statuses that only grow with what is stored (retention bounds them). */
const SETTLED_STATUSES = ['processed', 'ignored'];
/**
 * Below this many processed + ignored rows the count is taken again on every
 * call (a small inbox is always exact); decided by rows, not by time, so a
 * busy machine does not change what a small inbox reports.
 */
const SETTLED_ROWS_WORTH_REUSING = 100_000;
/** Above it, a count is reused until 100 times its own duration (at least 1 s) has passed: ≤ 1 % of the database's time. */
const REUSE_FACTOR = 100;
const MIN_REUSE_MS = 1_000;

interface SettledCount {
  counts: Map<string, number>;
  rows: number;
  takenAt: number;
  tookMs: number;
}

/** The last settled count per open database (one per process; a new Database starts fresh). */
const settledCounts = new WeakMap<Database, SettledCount>();

async function countWhereStatusIn(db: Database, statuses: string[]): Promise<Map<string, number>> {
  // One index range per status: (status, id) and the partial due index hold them in order.
  const rows = await db.query<{ status: string; count: number }>(
    'SELECT status, count(*)::int AS count FROM hookrun.webhook_events WHERE status = ANY($1::text[]) GROUP BY status',
    [statuses],
  );
  return new Map(rows.map((r) => [r.status, Number(r.count)]));
}

/** One statement per call (PGlite runs one at a time): the live statuses, plus the settled ones unless their last count is still fresh. */
async function countAll(db: Database): Promise<Map<string, number>> {
  const last = settledCounts.get(db);
  const now = performance.now();
  if (last && last.rows >= SETTLED_ROWS_WORTH_REUSING && now - last.takenAt < Math.max(MIN_REUSE_MS, last.tookMs * REUSE_FACTOR)) {
    return new Map([...(await countWhereStatusIn(db, LIVE_STATUSES)), ...last.counts]);
  }
  const all = await countWhereStatusIn(db, [...LIVE_STATUSES, ...SETTLED_STATUSES]);
  const counts = new Map(SETTLED_STATUSES.map((status) => [status, all.get(status) ?? 0]));
  const rows = [...counts.values()].reduce((sum, n) => sum + n, 0);
  settledCounts.set(db, { counts, rows, takenAt: now, tookMs: performance.now() - now });
  return all;
}

/**
 * Events by status, for `/metrics`, the dashboard and `GET /api/events/counts`.
 * The backlog (pending, failed) and dead are exact on every call:
 * their cost follows how many there are. Processed and ignored grow with
 * everything stored (1 M processed events: ~300 ms of index scan, in three
 * backends), so from 100,000 of them on, their count is reused until 100×
 * its duration has passed (at 1 M, about 30 s); meanwhile an event that
 * leaves the backlog shows in neither count until the next one.
 */
export async function countEventsByStatus(db: Database): Promise<Record<EventStatus, number>> {
  const counts = Object.fromEntries(EVENT_STATUSES.map((s) => [s, 0])) as Record<EventStatus, number>;
  for (const [status, count] of await countAll(db)) {
    if ((EVENT_STATUSES as readonly string[]).includes(status)) counts[status as EventStatus] = count;
  }
  return counts;
}
