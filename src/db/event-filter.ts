/**
 * What the events list, the search and a bulk replay select by: every field
 * optional, all of them ANDed. The console, `GET /api/events`,
 * `hookrun events list` and `POST /api/replays` share this one vocabulary.
 */
export interface EventFilter {
  source?: string;
  status?: string;
  /** The exact type, e.g. `invoice.paid`. */
  type?: string;
  /** Only events this handler (a project file's name, or a shipped mirror's) has run or owes a delivery of. */
  handler?: string;
  /** Received at or after this time. */
  from?: Date;
  /** Received before this time. */
  to?: Date;
  /** An id, an exact idempotency key, or the start of a type (`invoice.` finds `invoice.paid`). */
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
 * The JSON an equals search contains: `{"data":{"object":{"customer":"cus_123"}}}`.
 * A digit segment is an object key here (containment cannot say "index 0"); the
 * value is matched as a string, and as a number or boolean when it reads as one.
 */
function containment(path: string[], value: unknown): string {
  let nested: unknown = value;
  for (const key of [...path].reverse()) nested = { [key]: nested };
  return JSON.stringify(nested);
}

/** The typed forms a value may have in a payload: "42" matches 42 and "42"; "true" matches true and "true". */
function typedValues(value: string): unknown[] {
  const values: unknown[] = [value];
  if (value === 'true' || value === 'false') values.push(value === 'true');
  else if (value === 'null') values.push(null);
  else if (/^-?\d+(\.\d+)?$/.test(value) && Number.isFinite(Number(value)) && String(Number(value)) === value) values.push(Number(value));
  return values;
}

/**
 * The filter as SQL conditions on `hookrun.webhook_events` (aliased `e`),
 * each value a bound parameter added through `param`. Equals uses the
 * payload's GIN index (jsonb_path_ops containment); contains reads the
 * path's text from each row the other conditions leave (narrow it with a
 * source, type or time range).
 */
export function filterConditions(filter: EventFilter, param: (value: unknown) => string): string[] {
  const conditions: string[] = [];
  if (filter.source) conditions.push(`e.source = ${param(filter.source)}`);
  if (filter.status) conditions.push(`e.status = ${param(filter.status)}`);
  if (filter.type) conditions.push(`e.type = ${param(filter.type)}`);
  if (filter.from) conditions.push(`e.received_at >= ${param(filter.from)}`);
  if (filter.to) conditions.push(`e.received_at < ${param(filter.to)}`);
  if (filter.search) conditions.push(searchCondition(filter.search, param));
  if (filter.parked) conditions.push(`EXISTS (SELECT 1 FROM hookrun.handler_deliveries d WHERE d.event_id = e.id AND d.status = 'parked')`);
  if (filter.handler) {
    const name = param(filter.handler);
    conditions.push(
      `(EXISTS (SELECT 1 FROM hookrun.event_attempts a WHERE a.event_id = e.id AND a.handler = ${name})` +
        ` OR EXISTS (SELECT 1 FROM hookrun.handler_deliveries d WHERE d.event_id = e.id AND d.handler = ${name}))`,
    );
  }
  if (filter.where) conditions.push(payloadCondition(filter.where, param));
  return conditions;
}

/** The payload match as a condition on the row aliased `alias`. */
export function payloadCondition(match: PayloadMatch, param: (value: unknown) => string, alias = 'e'): string {
  if (match.op === 'equals') {
    const options = typedValues(match.value).map((value) => `${alias}.payload @> ${param(containment(match.path, value))}::jsonb`);
    return options.length === 1 ? options[0]! : `(${options.join(' OR ')})`;
  }
  const pattern = `%${match.value.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  return `${alias}.payload #>> ${param(match.path)}::text[] ILIKE ${param(pattern)}`;
}

/** id = n, or the exact key, or a type prefix (the newest-first walk of the id index filters on it: an admin search, not a hot path). */
function searchCondition(text: string, param: (value: unknown) => string): string {
  const prefix = `${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const options = [`e.key = ${param(text)}`, `e.type LIKE ${param(prefix)}`];
  if (/^\d{1,15}$/.test(text)) options.unshift(`e.id = ${param(Number(text))}`);
  return `(${options.join(' OR ')})`;
}
