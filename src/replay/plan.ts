import type { Queryable } from '../db/database.js';
import type { HandlerCatalog } from '../inbox/handler-overview.js';
import type { HandlerRegistry } from '../inbox/handlers/registry.js';
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
  /** `registry`: from the handlers this hookrun runs; `history`: from the handlers that ran on these events before (no registry at hand). */
  handlersFrom: 'registry' | 'history';
  /** The newest event id now: a replay started from this plan takes no event after it. */
  maxEventId: number;
}

/** A catalog that can also say which handlers take an event (the worker's registry can). */
type FindingCatalog = HandlerCatalog & Partial<Pick<HandlerRegistry, 'find'>>;

interface Group {
  source: string;
  type: string;
  status: string;
  fresh: boolean;
  done: Record<string, string>;
  stub: unknown;
  n: number;
}

/** The newest event id stored now (0 with none). */
export async function newestEventId(db: Queryable): Promise<number> {
  const [row] = await db.query<{ id: string | number | null }>('SELECT max(id) AS id FROM hookrun.webhook_events');
  return Number(row?.id ?? 0);
}

/**
 * The handlers a replay runs on an event, as inbox-requeue.ts resets it:
 * one handler only (a failed event's other failing handlers too), or all that
 * take it less those finished for good (a dead event reruns only its dead ones).
 */
function handlersRun(takers: string[], group: Group, handler: string | undefined): string[] {
  if (handler !== undefined) {
    if (group.status !== 'failed') return takers.filter((name) => name === handler);
    return takers.filter((name) => name === handler || group.done[name] === undefined);
  }
  if (group.fresh || group.status === 'processed' || group.status === 'ignored') return takers;
  return takers.filter((name) => group.done[name] === undefined || group.done[name] === 'dead' || group.done[name] === 'queued');
}

/**
 * The dry run: how many events the selection matches now, how many would be
 * replayed, which are skipped and why, and which handlers would run on how
 * many. Reads only; grouped in SQL by what decides the handlers (source,
 * type, status, finished handlers, a database change's table).
 */
export async function planReplay(
  db: Queryable,
  selection: ReplaySelection,
  handler?: string,
  options: { catalog?: FindingCatalog; maxEventId?: number } = {},
): Promise<ReplayPlan> {
  const checked = checkSelection(selection);
  const maxEventId = options.maxEventId ?? (await newestEventId(db));
  const params: unknown[] = [];
  const param = (value: unknown) => `$${params.push(value)}`;
  const where = [...selectionConditions(checked, param), `e.id <= ${param(maxEventId)}`].join(' AND ');
  const groups = await db.query<Group>(
    `SELECT e.source, e.type, e.status, e.deliveries IS NULL AS fresh,
            coalesce((SELECT jsonb_object_agg(d.k, d.v->>'status') FROM jsonb_each(e.deliveries->'done') AS d(k, v)), '{}'::jsonb) AS done,
            CASE WHEN e.source = 'database' THEN jsonb_build_object('schema', e.payload->'schema', 'table', e.payload->'table') END AS stub,
            count(*)::int AS n
     FROM hookrun.webhook_events e WHERE ${where} GROUP BY 1, 2, 3, 4, 5, 6`,
    params,
  );
  const matched = groups.reduce((sum, g) => sum + g.n, 0);
  const processing = groups.filter((g) => g.status === 'processing').reduce((sum, g) => sum + g.n, 0);
  const skipped: SkipReason[] = [];
  if (processing > 0)
    skipped.push({ reason: 'processing', text: 'being processed right now (a worker holds them; skipped unless settled by their turn)', count: processing });
  if ('ids' in checked && checked.ids.length > matched)
    skipped.push({ reason: 'not_found', text: 'no such event (or newer than this replay)', count: checked.ids.length - matched });
  const replayable = matched - processing;
  const find = options.catalog?.find?.bind(options.catalog);
  const handlers = find
    ? countFromRegistry(
        groups.filter((g) => g.status !== 'processing'),
        (g) => find({ source: g.source, type: g.type, payload: g.stub }).map((h) => h.name),
        handler,
      )
    : await countFromHistory(db, where, params, handler, replayable);
  return { matched, replayable, skipped, handlers, handlersFrom: find ? 'registry' : 'history', maxEventId };
}

function countFromRegistry(groups: Group[], takers: (g: Group) => string[], handler: string | undefined): ReplayPlan['handlers'] {
  const counts = new Map<string, number>();
  for (const group of groups) for (const name of handlersRun(takers(group), group, handler)) counts.set(name, (counts.get(name) ?? 0) + group.n);
  if (handler !== undefined && !counts.has(handler)) counts.set(handler, 0);
  return sorted(counts);
}

/** Without a registry: the handlers recorded on these events' attempts (one named handler: it, on every replayed event). */
async function countFromHistory(db: Queryable, where: string, params: unknown[], handler: string | undefined, replayable: number) {
  if (handler !== undefined) return [{ name: handler, events: replayable }];
  const rows = await db.query<{ name: string; events: number }>(
    `SELECT a.handler AS name, count(DISTINCT a.event_id)::int AS events FROM hookrun.event_attempts a
     JOIN hookrun.webhook_events e ON e.id = a.event_id WHERE ${where} AND e.status <> 'processing' AND a.handler IS NOT NULL GROUP BY a.handler`,
    params,
  );
  return sorted(new Map(rows.map((r) => [r.name, r.events])));
}

const sorted = (counts: Map<string, number>) =>
  [...counts].map(([name, events]) => ({ name, events })).sort((a, b) => b.events - a.events || a.name.localeCompare(b.name));
