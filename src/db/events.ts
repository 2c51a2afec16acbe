import type { Database } from './database.js';
import { filterConditions, indexedMatch, type EventFilter } from './event-filter.js';
import { inReadTurn, type IngestQueue } from './ingest-first.js';

/** Every status an inbox event can have, derived from its deliveries (deliveries/event-summary.ts); stored, filtered on and shown, so a name operators rely on (docs/design.md). */
export const EVENT_STATUSES = ['pending', 'processed', 'ignored', 'failed', 'dead'] as const;
/** Every status a handler's delivery can have; with a handler, the events list filters on its delivery's (db/event-filter.ts). */
export const DELIVERY_STATUSES = ['pending', 'running', 'failed', 'processed', 'dead', 'parked', 'debounced'] as const;

/** What `status` may be in a filter: an event's, or (with a handler) its delivery's. */
export const FILTER_STATUSES = [...new Set([...EVENT_STATUSES, ...DELIVERY_STATUSES])] as const;

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
  lastError: string | null;
  receivedAt: Date;
  processedAt: Date | null;
}

/** One inbox row with its payload: what `events show` and `GET /api/events/:id` return. */
export interface EventDetail extends EventSummary {
  payload: unknown;
  /** A suspected replay: the earlier event of its source with the same signed body (GitHub, Shopify), else null. */
  sameBodyAs: number | null;
}

/** Filters for a list page (event-filter.ts); `before` is the cursor: only ids below it. */
export interface ListEventsQuery extends EventFilter {
  before?: number;
  /** Page size, clamped to 1..200 (default 50). */
  limit?: number;
}

/**
 * One page, newest first; pass `nextCursor` as `before` for the next page
 * (undefined: last page). `searchedTo` is set when a payload search stopped
 * at its time budget before the page was full: it read the events down to
 * that id, and the next page goes on from there.
 */
export interface EventPage {
  events: EventSummary[];
  nextCursor: number | undefined;
  searchedTo?: number;
  /** `received`: newest received first (an event stored late with an older time, by a reconcile, sorts by that time); `stored`: newest stored first, the order a payload search reads in. */
  order: EventOrder;
}

/** How a page is sorted, newest first: by when each event was received, or by when it was stored (its id). */
export type EventOrder = 'received' | 'stored';

const DEFAULT_PAGE = 50;
const MAX_PAGE = 200;

/** The columns lists show, named as `EventSummary` names them (raw SQL: the query builder cost ~85 ms of every start-up). */
const SUMMARY_COLUMNS = `id, source, key, type, status, attempts, next_attempt_at AS "nextAttemptAt",
  last_error AS "lastError", received_at AS "receivedAt", processed_at AS "processedAt"`;

type SummaryRow = Omit<EventSummary, 'id'> & { id: number | string };

const asSummary = <T extends SummaryRow>(row: T): T & { id: number } => ({ ...row, id: Number(row.id) });

/** Ids a payload search reads per statement: small enough that the inbox's writes go between them (the embedded database runs one at a time). */
const SLICE_IDS = 2_000;
/** The longest a payload search reads for one page before it answers with what it found. */
export const SEARCH_BUDGET_MS = 1_500;

/** How a payload search reads: its time budget, and the receivers' queue its slices let go first (db/ingest-first.ts). */
export interface SearchReading {
  budgetMs?: number;
  ingest?: IngestQueue;
}

/**
 * List events newest received first (an event a reconcile stored late sorts
 * by when it was received, not above today's) with keyset pagination on
 * `(received_at, id)`, the cursor being the last event's id (stable while new
 * events arrive, unlike OFFSET), for the admin API, the console and
 * `hookrun events list`. Without a payload search, or with an equals search
 * the search index answers, it is one statement. A payload search that reads
 * the payloads walks the ids down a slice at a time (each its own statement,
 * so writers go between them; on the embedded database the slices of all
 * searches take turns after the receivers' queued inserts) and stops at its
 * time budget: a search never
 * holds the database, and the page says how far it read; such a page is in
 * stored order (`order: 'stored'`).
 */
export async function listEvents(db: Database, query: ListEventsQuery = {}, reading: SearchReading = {}): Promise<EventPage> {
  const { budgetMs = SEARCH_BUDGET_MS, ingest } = reading;
  const limit = Math.min(Math.max(Math.trunc(query.limit ?? DEFAULT_PAGE), 1), MAX_PAGE);
  if (!query.where || indexedMatch(query.where)) return pageOf(await selectPage(db, query, limit + 1, { below: query.before }, 'received'), limit, 'received');
  const started = performance.now();
  let below = query.before ?? Number((await db.query<{ top: string | number }>('SELECT coalesce(max(id), 0) + 1 AS top FROM hookrun.webhook_events'))[0]!.top);
  const rows: Array<EventSummary & { id: number }> = [];
  while (below > 1 && rows.length <= limit) {
    const atLeast = Math.max(below - SLICE_IDS, 0);
    const slice = { below, atLeast };
    rows.push(...(await inReadTurn(db, ingest, () => selectPage(db, query, limit + 1 - rows.length, slice, 'stored'))));
    below = atLeast;
    if (rows.length <= limit && below > 1 && performance.now() - started > budgetMs)
      return { ...pageOf(rows, limit, 'stored'), nextCursor: below, searchedTo: below };
  }
  return pageOf(rows, limit, 'stored');
}

function pageOf(rows: Array<EventSummary & { id: number }>, limit: number, order: EventOrder): EventPage {
  const events = rows.slice(0, limit);
  return { events, nextCursor: rows.length > limit ? events[events.length - 1]!.id : undefined, order };
}

/**
 * Up to `take` rows matching `query`, newest first in `order`: after the
 * event `below` in that order (received: the rows received before it, or at
 * the same time with a lower id; stored: ids below it), and stored: ids from
 * `atLeast`.
 */
async function selectPage(
  db: Database,
  query: EventFilter,
  take: number,
  range: { below?: number; atLeast?: number },
  order: EventOrder,
): Promise<Array<EventSummary & { id: number }>> {
  const params: unknown[] = [];
  const param = (value: unknown) => `$${params.push(value)}`;
  const conditions = filterConditions(query, param);
  if (range.below !== undefined && order === 'received')
    conditions.push(`(e.received_at, e.id) < (SELECT c.received_at, c.id FROM hookrun.webhook_events c WHERE c.id = ${param(range.below)})`);
  if (range.below !== undefined && order === 'stored') conditions.push(`e.id < ${param(range.below)}`);
  if (range.atLeast !== undefined) conditions.push(`e.id >= ${param(range.atLeast)}`);
  const where = conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';
  const sorted = order === 'received' ? 'e.received_at DESC, e.id DESC' : 'e.id DESC';
  const sql = `SELECT ${SUMMARY_COLUMNS} FROM hookrun.webhook_events e ${where} ORDER BY ${sorted} LIMIT ${param(take)}`;
  return (await db.query<SummaryRow>(sql, params)).map(asSummary);
}

/** One event with its payload, or undefined when no row has that id. */
export async function getEvent(db: Database, id: number): Promise<EventDetail | undefined> {
  const [row] = await db.query<SummaryRow & { payload: unknown; sameBodyAs: number | string | null }>(
    `SELECT ${SUMMARY_COLUMNS}, payload, same_body_as AS "sameBodyAs" FROM hookrun.webhook_events WHERE id = $1 LIMIT 1`,
    [id],
  );
  return row && { ...asSummary(row), sameBodyAs: row.sameBodyAs === null ? null : Number(row.sameBodyAs) };
}

/** One attempt of a delivery of an event (or the replay that opened a run), as the console, the admin API and the CLI show it. */
export interface EventAttempt {
  attempt: number;
  /** The delivery's run: 1, then one more per replay. */
  run: number;
  /** The handler this row is about (null: none ran). */
  handler: string | null;
  startedAt: Date;
  durationMs: number;
  /** processed, failed, dead, parked; `replayed` for a replay (then `actor` says who). */
  outcome: string;
  error: string | null;
  /** The error's stack, trimmed to the frames that matter. */
  stack: string | null;
  actor: string | null;
}

/**
 * Every attempt of an event's deliveries, and every replay of them, in the
 * order they happened: the rows `event_attempts` keeps (failures, replays,
 * the processed attempts a replay superseded) and each processed delivery's
 * last attempt, read off the delivery itself.
 */
export async function listAttempts(db: Database, eventId: number): Promise<EventAttempt[]> {
  const rows = await db.query<EventAttempt & { startedAt: Date | string }>(
    `SELECT attempt, run, handler, "startedAt", "durationMs", outcome, error, stack, actor FROM (
       SELECT attempt, run, handler, started_at AS "startedAt", duration_ms AS "durationMs", outcome, error, stack, actor, id AS n
       FROM hookrun.event_attempts WHERE event_id = $1
       UNION ALL
       SELECT attempts, run, handler, coalesce(started_at, finished_at), coalesce(duration_ms, 0), 'processed', NULL, NULL, NULL, NULL
       FROM hookrun.handler_deliveries WHERE event_id = $1 AND status = 'processed'
     ) a ORDER BY "startedAt", handler, attempt, n NULLS LAST`,
    [eventId],
  );
  return rows.map((r) => ({ ...r, run: Number(r.run), startedAt: new Date(r.startedAt) }));
}
