import { foldsCase, isSearchKey, normaliseSearchKey } from './search-keys.js';
/**
 * What the events list, the search and a bulk replay select by: every field
 * optional, all of them ANDed. The console, `GET /api/events`,
 * `hookrun events list` and `POST /api/replays` share this one vocabulary.
 */
export interface EventFilter {
  source?: string;
  /** The event's status; with `handler`, that handler's delivery's (pending, running, failed, processed, dead, parked, debounced). */
  status?: string;
  /** The exact type, e.g. `invoice.paid`. */
  type?: string;
  /** Only events with a delivery to this handler (a project file's name, or a shipped mirror's). */
  handler?: string;
  /** Received at or after this time. */
  from?: Date;
  /** Received before this time. */
  to?: Date;
  /** An id, an exact idempotency key, or the start of a type (`invoice.` finds `invoice.paid`); an id, email or uuid the payload holds (readSearch). */
  search?: string;
  /** A value inside the payload: `data.object.customer = cus_123` (equals) or `data.object.email ~ example.com` (contains). */
  where?: PayloadMatch;
  /** Only events with a handler delivery `parked` (an ordered handler out of attempts). */
  parked?: boolean;
}

/** A JSON path inside the payload and the value it must equal or contain. */
export interface PayloadMatch {
  /** Keys (and array indexes as digits) from the payload's root: `data.object.customer` → ['data', 'object', 'customer']. */
  path: string[];
  op: 'equals' | 'contains';
  value: string;
}

/** The longest path and value a search accepts: a search is typed by a person, never generated from a payload. */
const MAX_PATH_SEGMENTS = 12;
const MAX_VALUE = 200;
const SEGMENT = /^[A-Za-z0-9_$@-]{1,100}$/;

/**
 * Parse `path = value` or `path ~ value` (spaces around the operator
 * optional; a value may be quoted to keep spaces). Throws a message a person
 * can act on; the caller turns it into a 400.
 */
export function parsePayloadMatch(text: string): PayloadMatch {
  const found = /^\s*([^=~\s]+)\s*(=|~)\s*(.*?)\s*$/.exec(text);
  if (!found) throw new Error('A payload search is `path = value` or `path ~ value`, e.g. `data.object.customer = cus_123`.');
  const [, rawPath, operator, rawValue] = found as unknown as [string, string, string, string];
  const path = rawPath.split('.');
  if (path.length > MAX_PATH_SEGMENTS || !path.every((segment) => SEGMENT.test(segment)))
    throw new Error(`A payload path is up to ${MAX_PATH_SEGMENTS} keys of letters, digits, _ - $ @ joined by dots, e.g. data.object.customer.`);
  const value = /^"(.*)"$/.exec(rawValue)?.[1] ?? rawValue;
  if (value.length === 0 || value.length > MAX_VALUE) throw new Error(`Give a value of 1 to ${MAX_VALUE} characters after the ${operator}.`);
  return { path, op: operator === '=' ? 'equals' : 'contains', value };
}

/** The search as a person types it back: `data.object.customer = cus_123`. */
export function formatPayloadMatch(match: PayloadMatch): string {
  return `${match.path.join('.')} ${match.op === 'equals' ? '=' : '~'} ${/\s/.test(match.value) ? `"${match.value}"` : match.value}`;
}

/**
 * The filter as SQL conditions on `hookrun.webhook_events` (aliased `e`),
 * each value a bound parameter added through `param`. An equals search for an
 * id, an email or a uuid finds its events in the search index (db/search-keys.ts);
 * any other payload search reads the path's text from each row the other
 * conditions leave (events.ts walks those newest first, a slice at a time).
 */
export function filterConditions(filter: EventFilter, param: (value: unknown) => string): string[] {
  const conditions: string[] = [];
  if (filter.source) conditions.push(`e.source = ${param(filter.source)}`);
  if (filter.status && !filter.handler) conditions.push(`e.status = ${param(filter.status)}`);
  if (filter.type) conditions.push(`e.type = ${param(filter.type)}`);
  if (filter.from) conditions.push(`e.received_at >= ${param(filter.from)}`);
  if (filter.to) conditions.push(`e.received_at < ${param(filter.to)}`);
  if (filter.search) conditions.push(searchCondition(filter.search, param));
  if (filter.parked) conditions.push(`EXISTS (SELECT 1 FROM hookrun.handler_deliveries d WHERE d.event_id = e.id AND d.status = 'parked')`);
  if (filter.handler) conditions.push(deliveryCondition(filter.handler, filter.status, param));
  if (filter.where) conditions.push(payloadCondition(filter.where, param));
  return conditions;
}

/** Delivery statuses an index holds by handler: their events are found from the deliveries, not by reading every event. */
const INDEXED_DELIVERY_STATUSES = ['pending', 'failed', 'running', 'dead', 'parked'];

/** Events with a delivery to `handler` (in `status`, when given): the same rows the handler's counts are taken from. */
function deliveryCondition(handler: string, status: string | undefined, param: (value: unknown) => string): string {
  const name = param(handler);
  if (status === undefined) return `EXISTS (SELECT 1 FROM hookrun.handler_deliveries d WHERE d.event_id = e.id AND d.handler = ${name})`;
  const state = param(status);
  if (INDEXED_DELIVERY_STATUSES.includes(status))
    return `e.id IN (SELECT d.event_id FROM hookrun.handler_deliveries d WHERE d.handler = ${name} AND d.status = ${state})`;
  return `EXISTS (SELECT 1 FROM hookrun.handler_deliveries d WHERE d.event_id = e.id AND d.handler = ${name} AND d.status = ${state})`;
}

/**
 * The payload match as a condition on the row aliased `alias`: the path's
 * value as text (`#>>`: a digit segment is an array index or a key) equals
 * the value (so "42" finds 42 and "42", "true" finds true) or contains it;
 * `null` finds a JSON null. An equals search for a search key is first
 * narrowed to the events the search index has for it.
 */
export function payloadCondition(match: PayloadMatch, param: (value: unknown) => string, alias = 'e'): string {
  const path = param(match.path);
  if (match.op === 'contains') {
    const pattern = `%${match.value.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    return `${alias}.payload #>> ${path}::text[] ILIKE ${param(pattern)}`;
  }
  if (isSearchKey(match.value)) {
    // Emails and uuids are compared whatever their case, as the index keeps them.
    const key = normaliseSearchKey(match.value);
    const found = foldsCase(key) ? `lower(${alias}.payload #>> ${path}::text[])` : `${alias}.payload #>> ${path}::text[]`;
    return `${alias}.id IN (SELECT s.event_id FROM hookrun.event_search s WHERE s.value = ${param(key)}) AND ${found} = ${param(key)}`;
  }
  if (match.value === 'null') return `(${alias}.payload #> ${path}::text[])::text = 'null'`;
  return `${alias}.payload #>> ${path}::text[] = ${param(match.value)}`;
}

/** Whether the match is answered by the search index (else it reads every row it considers). */
export const indexedMatch = (match: PayloadMatch | undefined): boolean => match?.op === 'equals' && isSearchKey(match.value);

/** The search box's structured form for a value the payload holds anywhere: `payload:cus_123` (an id, an email or a uuid). */
export const PAYLOAD_SEARCH_PREFIX = 'payload:';

/**
 * How a search box's text is read: `payload:<value>` is the events whose
 * payload holds that id, email or uuid anywhere (the search index); a bare
 * id, email or uuid (pasted from a provider's dashboard or a support ticket)
 * is the same, or the event with that key; anything else is an id, the exact
 * key or a type prefix. `shown` is the structured form the console says back.
 */
export function readSearch(text: string): { holds?: string; orKey: boolean; shown?: string } {
  const given = text.startsWith(PAYLOAD_SEARCH_PREFIX) ? text.slice(PAYLOAD_SEARCH_PREFIX.length).trim() : undefined;
  const value = given ?? text.trim();
  if (!isSearchKey(value)) return { orKey: true };
  return { holds: normaliseSearchKey(value), orKey: given === undefined, shown: `${PAYLOAD_SEARCH_PREFIX}${value}` };
}

/** The events whose payload holds `value` (an id, an email or a uuid) anywhere: rows of the search index, never the payloads. */
const holdsCondition = (value: string, param: (value: unknown) => string, alias = 'e') =>
  `${alias}.id IN (SELECT s.event_id FROM hookrun.event_search s WHERE s.value = ${param(normaliseSearchKey(value))})`;

/**
 * The ids of the events with this key, whatever their source, through the
 * (source, key) index: the sources stored are found by a skip over the
 * source index (a few probes), then each is one lookup, never a read of
 * every event.
 */
const keyLookup = (key: string, param: (value: unknown) => string) =>
  `WITH RECURSIVE sources(source) AS (
     SELECT min(source) FROM hookrun.webhook_events
     UNION ALL SELECT (SELECT min(w.source) FROM hookrun.webhook_events w WHERE w.source > sources.source) FROM sources WHERE sources.source IS NOT NULL)
   SELECT k.id FROM sources JOIN hookrun.webhook_events k ON k.source = sources.source AND k.key = ${param(key)}`;

/**
 * id = n, or the exact key, or a type prefix (the newest-first walk of the id
 * index filters on it: an admin search, not a hot path); an id, email or uuid
 * (readSearch) is looked up in the search index and the key's index instead.
 */
function searchCondition(text: string, param: (value: unknown) => string): string {
  const read = readSearch(text);
  if (read.holds !== undefined) {
    const holds = holdsCondition(read.holds, param);
    return read.orKey ? `(${holds} OR e.id IN (${keyLookup(text.trim(), param)}))` : holds;
  }
  const prefix = `${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const options = [`e.key = ${param(text)}`, `e.type LIKE ${param(prefix)}`];
  if (/^\d{1,15}$/.test(text)) options.unshift(`e.id = ${param(Number(text))}`);
  return `(${options.join(' OR ')})`;
}
