import type { Database } from './database.js';
import { filterConditions, payloadCondition, type EventFilter } from './event-filter.js';

/** Every status an inbox event can have, in lifecycle order; stored, filtered on and shown, so a name operators rely on (docs/design.md). */
export const EVENT_STATUSES = ['pending', 'processing', 'waiting', 'processed', 'ignored', 'failed', 'dead'] as const;
/** One of `EVENT_STATUSES`: the `status` column's vocabulary. */
export type EventStatus = (typeof EVENT_STATUSES)[number];

/** An inbox row without its payload: what lists show. */
export interface EventSummary {
  id: number;
  source: string;
  key: string;
  type: string;
  status: string;
  attempts: number;
  nextAttemptAt: Date;
  lockedUntil: Date | null;
  lastError: string | null;
  receivedAt: Date;
  processedAt: Date | null;
}

/** One inbox row with its payload: what `events show` and `GET /api/events/:id` return. */
export interface EventDetail extends EventSummary {
  payload: unknown;
}

/** Filters for a list page (event-filter.ts); `before` is the cursor: only ids below it. */
export interface ListEventsQuery extends EventFilter {
  before?: number;
  /** Page size, clamped to 1..200 (default 50). */
  limit?: number;
}

/** One page, newest first; pass `nextCursor` as `before` for the next page (undefined: last page). */
export interface EventPage {
  events: EventSummary[];
  nextCursor: number | undefined;
}

const DEFAULT_PAGE = 50;
const MAX_PAGE = 200;

/** The columns lists show, named as `EventSummary` names them (raw SQL: the query builder cost ~85 ms of every start-up). */
const SUMMARY_COLUMNS = `id, source, key, type, status, attempts, next_attempt_at AS "nextAttemptAt", locked_until AS "lockedUntil",
  last_error AS "lastError", received_at AS "receivedAt", processed_at AS "processedAt"`;

type SummaryRow = Omit<EventSummary, 'id'> & { id: number | string };

const asSummary = <T extends SummaryRow>(row: T): T & { id: number } => ({ ...row, id: Number(row.id) });

/**
 * List events newest first with keyset pagination on `id` (stable while new
 * events arrive, unlike OFFSET), for the admin API and `hookrun events list`.
 *
 * A payload equals search runs in two steps. PostgreSQL keeps no statistics
 * on large payloads, so it cannot tell a value matching 20 events from one
 * matching 50,000, and walks the id index newest first either way: instant for
 * a common value, every row read for a rare one. So the newest
 * `RECENT_WINDOW` ids are walked first (a common value fills the page there),
 * and only the rest of the page is asked of the payload's GIN index, among
 * the older ids.
 */
export async function listEvents(db: Database, query: ListEventsQuery = {}): Promise<EventPage> {
  const limit = Math.min(Math.max(Math.trunc(query.limit ?? DEFAULT_PAGE), 1), MAX_PAGE);
  if (query.where?.op !== 'equals') return pageOf(await selectPage(db, query, limit + 1, { below: query.before }), limit);
  const top = query.before ?? Number((await db.query<{ top: string | number }>('SELECT coalesce(max(id), 0) + 1 AS top FROM hookrun.webhook_events'))[0]!.top);
  const floor = Math.max(top - RECENT_WINDOW, 0);
  const recent = await selectPage(db, query, limit + 1, { below: top, atLeast: floor });
  if (recent.length > limit || floor === 0) return pageOf(recent, limit);
  const older = await selectPage(db, query, limit + 1 - recent.length, { below: floor, throughIndex: true });
  return pageOf([...recent, ...older], limit);
}

/** Ids a payload equals search walks before it asks the payload index (about 50 ms of reading on PostgreSQL). */
const RECENT_WINDOW = 20_000;

function pageOf(rows: Array<EventSummary & { id: number }>, limit: number): EventPage {
  const events = rows.slice(0, limit);
  return { events, nextCursor: rows.length > limit ? events[events.length - 1]!.id : undefined };
}

/** Up to `take` rows matching `query` with ids in [atLeast, below), newest first; `throughIndex` finds the payload match's ids in its GIN index first. */
async function selectPage(
  db: Database,
  query: EventFilter,
  take: number,
  range: { below?: number; atLeast?: number; throughIndex?: boolean },
): Promise<Array<EventSummary & { id: number }>> {
  const params: unknown[] = [];
  const param = (value: unknown) => `$${params.push(value)}`;
  const conditions = filterConditions(range.throughIndex ? { ...query, where: undefined } : query, param);
  if (range.below !== undefined) conditions.push(`e.id < ${param(range.below)}`);
  if (range.atLeast !== undefined) conditions.push(`e.id >= ${param(range.atLeast)}`);
  if (range.throughIndex && query.where) {
    const below = range.below !== undefined ? ` AND g.id < ${param(range.below)}` : '';
    conditions.push(`e.id = ANY(ARRAY(SELECT g.id FROM hookrun.webhook_events g WHERE ${payloadCondition(query.where, param, 'g')}${below}))`);
  }
  const where = conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';
  const sql = `SELECT ${SUMMARY_COLUMNS} FROM hookrun.webhook_events e ${where} ORDER BY id DESC LIMIT ${param(take)}`;
  return (await db.query<SummaryRow>(sql, params)).map(asSummary);
}

/** One event with its payload, or undefined when no row has that id. */
export async function getEvent(db: Database, id: number): Promise<EventDetail | undefined> {
  const [row] = await db.query<SummaryRow & { payload: unknown }>(`SELECT ${SUMMARY_COLUMNS}, payload FROM hookrun.webhook_events WHERE id = $1 LIMIT 1`, [id]);
  return row && asSummary(row);
}

/** Statuses whose rows the worker still owes (waiting: flow control) or an operator must look at: counted exactly on every call. */
const LIVE_STATUSES = ['pending', 'processing', 'waiting', 'failed', 'dead'];
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
 * The backlog (pending, processing, failed) and dead are exact on every call:
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

/** One processing attempt of an event, as the dashboard and the admin API show it. */
export interface EventAttempt {
  attempt: number;
  /** The handler this run was (null: none ran, e.g. `ignored`). */
  handler: string | null;
  startedAt: Date;
  durationMs: number;
  outcome: string;
  error: string | null;
}

/** Every recorded attempt of an event, first to last. */
export async function listAttempts(db: Database, eventId: number): Promise<EventAttempt[]> {
  const rows = await db.query<EventAttempt & { startedAt: Date | string }>(
    `SELECT attempt, handler, started_at AS "startedAt", duration_ms AS "durationMs", outcome, error FROM hookrun.event_attempts WHERE event_id = $1 ORDER BY attempt, id`,
    [eventId],
  );
  return rows.map((r) => ({ ...r, startedAt: new Date(r.startedAt) }));
}

/** Per minute over the last `minutes`: events received, and attempts that ended processed, failed or dead. */
export interface MinuteCounts {
  /** The first minute (ms epoch, UTC, whole minute). */
  from: number;
  received: number[];
  processed: number[];
  failed: number[];
  dead: number[];
}

/** Most recent inbox rows the received series looks at, so the chart costs an index range, not a table scan. */
const RECEIVED_SCAN_ROWS = 50_000;

/** The dashboard's charts: counts per minute for the last hour. */
export async function countsPerMinute(db: Database, now: number, minutes = 60): Promise<MinuteCounts> {
  const from = Math.floor(now / 60_000) * 60_000 - (minutes - 1) * 60_000;
  const since = new Date(from);
  const [received, attempts] = await Promise.all([
    db.query<{ minute: Date | string; n: number }>(
      `SELECT date_trunc('minute', received_at) AS minute, count(*)::int AS n FROM hookrun.webhook_events
       WHERE id > (SELECT coalesce(max(id), 0) - $2 FROM hookrun.webhook_events) AND received_at >= $1::timestamptz GROUP BY 1`,
      [since, RECEIVED_SCAN_ROWS],
    ),
    db.query<{ minute: Date | string; outcome: string; n: number }>(
      `SELECT date_trunc('minute', started_at) AS minute, outcome, count(*)::int AS n FROM hookrun.event_attempts
       WHERE started_at >= $1::timestamptz AND outcome IN ('processed', 'failed', 'dead') GROUP BY 1, 2`,
      [since],
    ),
  ]);
  const series = () => new Array<number>(minutes).fill(0);
  const out: MinuteCounts = { from, received: series(), processed: series(), failed: series(), dead: series() };
  const slot = (minute: Date | string) => Math.round((new Date(minute).getTime() - from) / 60_000);
  for (const r of received) if (slot(r.minute) >= 0 && slot(r.minute) < minutes) out.received[slot(r.minute)] = r.n;
  for (const r of attempts) {
    const i = slot(r.minute);
    if (i >= 0 && i < minutes) out[r.outcome as 'processed' | 'failed' | 'dead'][i] = r.n;
  }
  return out;
}
