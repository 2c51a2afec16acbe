import type { Database } from '../src/db/database.js';
import { retainedTableBytes } from '../src/db/retention.js';
import { prune } from '../src/retention/prune.js';
import { makeSignedEvents } from './events.js';
import { fillSearchKeys } from './search-fill.js';
import { timed } from './storage.js';

const DAY_MS = 86_400_000;
/** Rows per fill statement: one INSERT … SELECT … FROM generate_series. */
const FILL_CHUNK = 250_000;
/** The filled rows were received over this span, oldest first in id order (id ≈ arrival, as retention assumes). */
export const FILL_SPAN_MS = 25 * DAY_MS;
/** EVENT_RETENTION_DAYS' default; the retention pass uses the production defaults. */
const RETENTION = { events: 30, dedupeKeys: 90, cronRuns: 90 };
const PLACEHOLDER = '__EVENT_ID__';

/**
 * Filled, processed events, written straight in SQL: one realistic Stripe
 * event per type (bench/events.ts, pretty-printed, ~1.6 KB) as a template
 * whose event id is replaced per row; distinct random keys (md5, like
 * provider ids they land all over the unique index); received_at spread over
 * FILL_SPAN_MS in id order; each with its one processed `handler_deliveries`
 * row (attempt 1, its duration: a processed attempt has no event_attempts
 * row), as the settle statement leaves it, and its search keys
 * (event_search). Ids are given explicitly (1..final) and the
 * sequence is moved past them first, so the events hookrun receives during
 * the measurements get higher ids whatever size the fill has reached.
 */
const FILL_SQL = `
  WITH ins AS (
    INSERT INTO hookrun.webhook_events (id, source, key, type, payload, status, attempts, next_attempt_at, received_at, processed_at)
    SELECT n, 'payments', x.k, ($3::text[])[1 + (n % 6)::int], replace(($4::text[])[1 + (n % 6)::int], '${PLACEHOLDER}', x.k)::json,
           'processed', 1, x.r, x.r, x.r + (5 + n % 200) * interval '1 millisecond'
    FROM generate_series($1::bigint, $2::bigint) AS n,
         LATERAL (SELECT 'evt_' || substr(md5(n::text), 1, 24) AS k,
                         $5::timestamptz - ($6::float8 * (1 - n::float8 / $7::float8)) * interval '1 millisecond' AS r) AS x
    RETURNING id, processed_at
  )
  INSERT INTO hookrun.handler_deliveries (event_id, handler, status, attempts, run_after, rank, started_at, duration_ms, finished_at, created_at)
  SELECT id, 'payments', 'processed', 1, processed_at - interval '5 milliseconds', processed_at - interval '5 milliseconds',
         processed_at - interval '4 milliseconds', 4, processed_at, processed_at - interval '5 milliseconds' FROM ins`;

/** Where one fill stands: the time its rows are spread back from, and the final size its ids are reserved for. */
export interface FillPlan {
  startedAt: number;
  finalSize: number;
}

function templates(): { types: string[]; bodies: string[] } {
  const events = makeSignedEvents(6);
  return {
    types: events.map((e) => JSON.parse(e.body).type as string),
    bodies: events.map((e) => e.body.split(e.id).join(PLACEHOLDER)),
  };
}

/** Reserve ids 1..finalSize for the fill (call once, on the empty database). */
export async function reserveIds(db: Database, finalSize: number): Promise<void> {
  await db.query(`SELECT setval(pg_get_serial_sequence('hookrun.webhook_events', 'id'), $1::bigint)`, [Math.max(finalSize, 1)]);
}

/** Fill rows from+1..to (processed, old), then VACUUM ANALYZE as autovacuum eventually would; ms of each. */
export async function fillProcessed(
  db: Database,
  plan: FillPlan,
  from: number,
  to: number,
  progress: (line: string) => void,
): Promise<{ insertMs: number; vacuumMs: number }> {
  const { types, bodies } = templates();
  const started = performance.now();
  for (let first = from + 1; first <= to; first += FILL_CHUNK) {
    const last = Math.min(to, first + FILL_CHUNK - 1);
    await db.query(FILL_SQL, [first, last, types, bodies, new Date(plan.startedAt).toISOString(), FILL_SPAN_MS, plan.finalSize]);
    await fillSearchKeys(db, first, last);
    progress(`scale: filled ${last.toLocaleString('en-US')} rows (${((performance.now() - started) / 1000).toFixed(0)} s)`);
  }
  const insertMs = performance.now() - started;
  const vacuumStarted = performance.now();
  for (const table of ['webhook_events', 'handler_deliveries', 'event_search']) await db.query(`VACUUM ANALYZE hookrun.${table}`);
  return { insertMs, vacuumMs: performance.now() - vacuumStarted };
}

/** On-disk bytes (heap, TOAST, indexes) of the inbox (webhook_events), and of its deliveries with their history (handler_deliveries and event_attempts). */
export async function inboxBytes(db: Database): Promise<{ events: number; deliveries: number; rows: number }> {
  const [row] = await db.query<{ events: string; deliveries: string; rows: number }>(
    `SELECT pg_total_relation_size('hookrun.webhook_events') AS events,
            pg_total_relation_size('hookrun.handler_deliveries') + pg_total_relation_size('hookrun.event_attempts') AS deliveries,
            (SELECT count(*)::int FROM hookrun.webhook_events) AS rows`,
  );
  return { events: Number(row!.events), deliveries: Number(row!.deliveries), rows: row!.rows };
}

/** One retention pass over the filled inbox, and then the passes it takes to delete everything past retention. */
export interface ScaleRetention {
  rowsBefore: number;
  /** Rows past EVENT_RETENTION_DAYS when the pass ran. */
  pastRetention: number;
  firstPass: { ms: number; longestStatementMs: number; deleted: number; statements: number };
  allPasses: { passes: number; ms: number; longestStatementMs: number; deleted: number };
  /** webhook_events (+ TOAST, indexes) before, and after the passes and a VACUUM. */
  eventsBytesBefore: number;
  eventsBytesAfter: number;
  /** handler_deliveries and event_attempts, before and after. */
  deliveriesBytesBefore: number;
  deliveriesBytesAfter: number;
  keysBytesAfter: number;
}

/**
 * Retention at the final size: the pass runs "later" (prune's `now` moved
 * forward, no row rewritten) so that the older `fraction` of the filled rows
 * is past EVENT_RETENTION_DAYS. Every statement is timed; retention's wait
 * between saving keys and deleting (statement_timeout + 1 s, it holds
 * nothing) is skipped, as in bench/storage.ts. A pass deletes at most 200,000
 * events (prune.ts), so passes follow until one deletes nothing.
 */
export async function measureRetention(db: Database, plan: FillPlan, fraction: number, progress: (line: string) => void): Promise<ScaleRetention> {
  const now = plan.startedAt - (1 - fraction) * FILL_SPAN_MS + RETENTION.events * DAY_MS;
  const before = await inboxBytes(db);
  const [past] = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM hookrun.webhook_events WHERE status IN ('processed', 'ignored', 'dead') AND received_at < $1::timestamptz`,
    [new Date(now - RETENTION.events * DAY_MS).toISOString()],
  );
  const passes: Array<{ ms: number; longest: number; deleted: number; statements: number }> = [];
  for (;;) {
    const durations: number[] = [];
    const started = performance.now();
    const report = await prune(timed(db, durations), RETENTION, now);
    passes.push({ ms: performance.now() - started, longest: Math.max(0, ...durations), deleted: report.events, statements: durations.length });
    progress(
      `scale: retention pass ${passes.length}: ${report.events} events in ${passes.at(-1)!.ms.toFixed(0)} ms, longest statement ${passes.at(-1)!.longest.toFixed(1)} ms`,
    );
    if (report.events === 0) break;
  }
  for (const table of ['webhook_events', 'handler_deliveries', 'event_attempts', 'event_search', 'webhook_event_keys'])
    await db.query(`VACUUM hookrun.${table}`);
  const after = await inboxBytes(db);
  const keys = await retainedTableBytes(db);
  const first = passes[0]!;
  return {
    rowsBefore: before.rows,
    pastRetention: past!.n,
    firstPass: { ms: first.ms, longestStatementMs: first.longest, deleted: first.deleted, statements: first.statements },
    allPasses: {
      passes: passes.length,
      ms: passes.reduce((sum, p) => sum + p.ms, 0),
      longestStatementMs: Math.max(...passes.map((p) => p.longest)),
      deleted: passes.reduce((sum, p) => sum + p.deleted, 0),
    },
    eventsBytesBefore: before.events,
    eventsBytesAfter: after.events,
    deliveriesBytesBefore: before.deliveries,
    deliveriesBytesAfter: after.deliveries,
    keysBytesAfter: keys.webhook_event_keys ?? 0,
  };
}
