import type { Queryable } from '../db/database.js';
import type { HandlerCatalog } from '../inbox/handler-overview.js';
import type { HandlerRegistry } from '../deliveries/registry.js';
import { replayChoosesSql } from '../deliveries/requeue-sql.js';
import { checkSelection, selectionConditions, type ReplaySelection } from './selection.js';

/** Why an event a selection names is not replayed. */
export interface SkipReason {
  reason: 'processing' | 'not_found';
  /** The reason as a person reads it. */
  text: string;
  count: number;
}

/** What a bulk replay would do, written before anything is: the dry run, and the `total` a started one records. */
export interface ReplayPlan {
  /** Events the selection matches (up to `maxEventId`). */
  matched: number;
  /** Of those, how many would go back to the queue. */
  replayable: number;
  skipped: SkipReason[];
  /** Which handlers would run again, on how many of the events, most first. */
  handlers: Array<{ name: string; events: number }>;
  /** `registry`: events without deliveries counted by the handlers this hookrun runs; `history`: only the deliveries the events have (no registry at hand). */
  handlersFrom: 'registry' | 'history';
  /** The newest event id now: a replay started from this plan takes no event after it. */
  maxEventId: number;
}

/** A catalog that can also say which handlers take an event (the worker's registry can). */
type FindingCatalog = HandlerCatalog & Partial<Pick<HandlerRegistry, 'find'>>;

interface Group {
  source: string;
  type: string;
  stub: unknown;
  n: number;
}

/** The newest event id stored now (0 with none). */
export async function newestEventId(db: Queryable): Promise<number> {
  const [row] = await db.query<{ id: string | number | null }>('SELECT max(id) AS id FROM hookrun.webhook_events');
  return Number(row?.id ?? 0);
}

/**
 * The dry run: how many events the selection matches now, how many would be
 * replayed, which are skipped and why, and which handlers would run on how
 * many. Reads only, with the rule the replay itself uses (requeue-sql.ts):
 * an event's chosen deliveries, or, for an event without deliveries, the
 * handlers that take it now.
 */
export async function planReplay(
  db: Queryable,
  selection: ReplaySelection,
  handler?: string,
  options: { catalog?: FindingCatalog; maxEventId?: number } = {},
): Promise<ReplayPlan> {
  const checked = checkSelection(selection);
  const maxEventId = options.maxEventId ?? (await newestEventId(db));
  const selected = (first: unknown[]) => {
    const params = [...first];
    const param = (value: unknown) => `$${params.push(value)}`;
    return { params, where: [...selectionConditions(checked, param), `e.id <= ${param(maxEventId)}`].join(' AND ') };
  };
  const { params, where } = selected([handler ?? null]);
  const [totals] = await db.query<{ matched: number; busy: number }>(
    `SELECT count(*)::int AS matched, count(*) FILTER (WHERE x.chosen = 0 AND x.running > 0)::int AS busy FROM (
       SELECT e.id, count(d.id) FILTER (WHERE ${replayChoosesSql('$1')}) AS chosen, count(d.id) FILTER (WHERE d.status = 'running') AS running
       FROM hookrun.webhook_events e LEFT JOIN hookrun.handler_deliveries d ON d.event_id = e.id
       WHERE ${where} GROUP BY e.id) x`,
    params,
  );
  const byHandler = await db.query<{ name: string; events: number }>(
    `SELECT d.handler AS name, count(DISTINCT e.id)::int AS events FROM hookrun.webhook_events e JOIN hookrun.handler_deliveries d ON d.event_id = e.id
     WHERE ${where} AND ${replayChoosesSql('$1')} GROUP BY d.handler`,
    params,
  );
  // Events without deliveries are turned into deliveries anew by a replay of all handlers (a replay of one handler leaves them).
  const without = selected([]);
  const fresh = await db.query<Group>(
    `SELECT e.source, e.type, CASE WHEN e.source = 'database' THEN jsonb_build_object('schema', e.payload->'schema', 'table', e.payload->'table') END AS stub,
            count(*)::int AS n
     FROM hookrun.webhook_events e WHERE ${without.where} AND NOT EXISTS (SELECT 1 FROM hookrun.handler_deliveries d WHERE d.event_id = e.id)
     GROUP BY 1, 2, 3`,
    without.params,
  );
  const matched = totals?.matched ?? 0;
  const busy = totals?.busy ?? 0;
  const skipped: SkipReason[] = [];
  if (busy > 0)
    skipped.push({ reason: 'processing', text: 'being processed right now (a worker holds them; skipped unless settled by their turn)', count: busy });
  if ('ids' in checked && checked.ids.length > matched)
    skipped.push({ reason: 'not_found', text: 'no such event (or newer than this replay)', count: checked.ids.length - matched });
  const counts = new Map(byHandler.map((r) => [r.name, r.events]));
  const find = options.catalog?.find?.bind(options.catalog);
  if (find && handler === undefined)
    for (const group of fresh)
      for (const h of find({ source: group.source, type: group.type, payload: group.stub })) counts.set(h.name, (counts.get(h.name) ?? 0) + group.n);
  if (handler !== undefined && !counts.has(handler)) counts.set(handler, 0);
  const replayable = matched - busy - (handler === undefined ? 0 : fresh.reduce((sum, g) => sum + g.n, 0));
  return { matched, replayable, skipped, handlers: sorted(counts), handlersFrom: find ? 'registry' : 'history', maxEventId };
}

const sorted = (counts: Map<string, number>) =>
  [...counts].map(([name, events]) => ({ name, events })).sort((a, b) => b.events - a.events || a.name.localeCompare(b.name));
