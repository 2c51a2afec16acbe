import { filterConditions, formatPayloadMatch, type EventFilter, type PayloadMatch } from '../db/event-filter.js';
import { AppError } from '../errors.js';

/** The most ids a hand-picked replay may name (a larger set is a filter's job). */
export const MAX_REPLAY_IDS = 1000;

/** Which events a bulk replay takes: those a filter matches, or ids picked by hand. */
export type ReplaySelection = { filter: EventFilter } | { ids: number[] };

/** A selection as stored in `replay_batches.selection` and sent as JSON: dates as ISO strings. */
export type SelectionJson =
  | { filter: Omit<EventFilter, 'from' | 'to'> & { from?: string; to?: string } }
  | {
      ids: number[];
    };

/** Check a selection before it is planned or stored: ids bounded and whole, dates real. */
export function checkSelection(selection: ReplaySelection): ReplaySelection {
  if ('ids' in selection) {
    const ids = [...new Set(selection.ids)];
    if (ids.length === 0) throw new AppError('bad_request', 'ids: give at least one event id, or a filter instead.');
    if (ids.length > MAX_REPLAY_IDS) throw new AppError('bad_request', `ids: at most ${MAX_REPLAY_IDS} ids per replay; select more with a filter.`);
    if (!ids.every((id) => Number.isSafeInteger(id) && id > 0)) throw new AppError('bad_request', 'ids: every id is a positive whole number.');
    return { ids: ids.sort((a, b) => a - b) };
  }
  for (const [name, date] of [
    ['from', selection.filter.from],
    ['to', selection.filter.to],
  ] as const) {
    if (date !== undefined && !Number.isFinite(date.getTime())) throw new AppError('bad_request', `${name}: not a date; use ISO, e.g. 2026-11-20T08:00:00Z.`);
  }
  return selection;
}

/** The selection as JSON (what the audit stores and shows). */
export function selectionToJson(selection: ReplaySelection): SelectionJson {
  if ('ids' in selection) return { ids: selection.ids };
  const { from, to, ...rest } = selection.filter;
  const filter: Record<string, unknown> = { ...rest };
  if (from) filter.from = from.toISOString();
  if (to) filter.to = to.toISOString();
  for (const key of Object.keys(filter)) if (filter[key] === undefined || filter[key] === false) delete filter[key];
  return { filter: filter as SelectionJson extends { filter: infer F } ? F : never };
}

/** A stored selection back as one to run (dates parsed). */
export function selectionFromJson(json: unknown): ReplaySelection {
  const value = json as { ids?: unknown; filter?: Record<string, unknown> };
  if (Array.isArray(value.ids)) return { ids: value.ids.map(Number) };
  const { from, to, ...rest } = value.filter ?? {};
  const filter: EventFilter = { ...(rest as Omit<EventFilter, 'from' | 'to'>) };
  if (typeof from === 'string') filter.from = new Date(from);
  if (typeof to === 'string') filter.to = new Date(to);
  return { filter };
}

/** The selection as SQL conditions on `hookrun.webhook_events` aliased `e` (parameters bound through `param`). */
export function selectionConditions(selection: ReplaySelection, param: (value: unknown) => string): string[] {
  if ('ids' in selection) return [`e.id = ANY(${param(selection.ids)}::bigint[])`];
  return filterConditions(selection.filter, param);
}

/** The selection in words for the audit: "status dead, source payments, data.customer = cus_1" or "3 events picked by id: 4, 7, 9". */
export function describeSelection(selection: ReplaySelection): string {
  if ('ids' in selection) {
    const shown = selection.ids.slice(0, 10).join(', ');
    return `${selection.ids.length} event(s) picked by id: ${shown}${selection.ids.length > 10 ? ', …' : ''}`;
  }
  const f = selection.filter;
  const parts = [
    f.status && `status ${f.status}`,
    f.source && `source ${f.source}`,
    f.type && `type ${f.type}`,
    f.handler && `handler ${f.handler}`,
    f.from && `from ${f.from.toISOString()}`,
    f.to && `before ${f.to.toISOString()}`,
    f.search && `search "${f.search}"`,
    f.where && `payload ${formatPayloadMatch(f.where as PayloadMatch)}`,
    f.parked && 'with a parked delivery',
  ].filter((part): part is string => typeof part === 'string');
  return parts.length > 0 ? parts.join(', ') : 'every event';
}
