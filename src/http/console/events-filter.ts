import { parsePayloadMatch, readSearch, type EventFilter } from '../../db/event-filter.js';
import { DELIVERY_STATUSES, EVENT_STATUSES } from '../../db/events.js';
import { InstantError, readInstant } from '../../time/instant.js';

/** The query parameters the events list reads, in the order its links write them; the replay pages read the same. */
export const FILTER_PARAMS = ['source', 'type', 'status', 'handler', 'from', 'to', 'q', 'where', 'parked'] as const;
/** One of FILTER_PARAMS. */
export type FilterParam = (typeof FILTER_PARAMS)[number];
/** The list's filters as the URL carries them (text, as typed). */
export type FilterQuery = Partial<Record<FilterParam, string>>;

/** The filters of a request's query string, empty ones left out. */
export function filterQueryOf(query: (name: string) => string | undefined): FilterQuery {
  const out: FilterQuery = {};
  for (const name of FILTER_PARAMS) {
    const value = query(name)?.trim();
    if (value) out[name] = value.slice(0, 400);
  }
  return out;
}

/** `source=…&status=…` of the filters (no leading `?`), with `extra` (a cursor) after them. */
export function filterSearch(filter: FilterQuery, extra: Record<string, string | number | undefined> = {}): string {
  const params = new URLSearchParams();
  for (const name of FILTER_PARAMS) if (filter[name]) params.set(name, filter[name]);
  for (const [name, value] of Object.entries(extra)) if (value !== undefined && value !== '') params.set(name, String(value));
  return params.toString();
}

/** The list's URL with these filters. */
export const eventsUrl = (filter: FilterQuery, extra: Record<string, string | number | undefined> = {}): string => {
  const search = filterSearch(filter, extra);
  return search ? `/admin/events?${search}` : '/admin/events';
};

/** A time as a `datetime-local` input's value, in UTC: `2025-01-31T09:00`. */
export const localInput = (date: Date): string => date.toISOString().slice(0, 16);

/**
 * A bare id, email or uuid pasted in the payload box (no `=` or `~`), while
 * the search box is empty: it is the search `payload:<value>`, moved to the
 * search box, so the form shows the way to type it.
 */
function movePastedValue(query: FilterQuery): FilterQuery {
  if (!query.where || query.q || /[=~]/.test(query.where) || readSearch(query.where).holds === undefined) return query;
  return { ...query, q: readSearch(query.where).shown, where: undefined };
}

/**
 * The filter the query asks for, and what was wrong with it (each invalid
 * part named, the rest still applied); `query` as it is read (a pasted value
 * moved to the search box), and `shown`, the structured form of a search the
 * search index answers, to say back to the reader.
 */
export function eventFilterOf(given: FilterQuery): { filter: EventFilter; errors: string[]; query: FilterQuery; shown?: { text: string; orKey: boolean } } {
  const query = movePastedValue(given);
  const filter: EventFilter = {};
  const errors: string[] = [];
  if (query.source) filter.source = query.source;
  if (query.type) filter.type = query.type;
  if (query.q) filter.search = query.q;
  if (query.parked === '1' || query.parked === 'true') filter.parked = true;
  if (query.status) {
    const allowed: readonly string[] = query.handler ? DELIVERY_STATUSES : EVENT_STATUSES;
    if (allowed.includes(query.status)) filter.status = query.status;
    else errors.push(`Status "${query.status}" is not one of ${allowed.join(', ')}${query.handler ? ' (a delivery of the handler)' : ''}.`);
  }
  if (query.handler) {
    if (/^[a-z0-9][a-z0-9-]{0,99}$/.test(query.handler)) filter.handler = query.handler;
    else errors.push('A handler name is lowercase letters, digits and dashes (its file name).');
  }
  for (const side of ['from', 'to'] as const) {
    const text = query[side];
    if (!text) continue;
    const at = readInstant(text);
    if (at) filter[side] = at;
    else errors.push(new InstantError(side, text).message);
  }
  if (query.where) {
    try {
      filter.where = parsePayloadMatch(query.where);
    } catch (error) {
      errors.push(`Payload search: ${(error as Error).message}`);
    }
  }
  const read = query.q ? readSearch(query.q) : undefined;
  return { filter, errors, query, shown: read?.shown ? { text: read.shown, orKey: read.orKey } : undefined };
}
