import { AppError } from '../../errors.js';
import type { ReplaySelection } from '../../replay/selection.js';
import { selectionOf } from '../replay-schemas.js';

/** The events list's filter names, as its links and forms carry them (`q` is the search). */
export const SELECTION_KEYS = ['source', 'status', 'type', 'handler', 'from', 'to', 'q', 'where', 'parked'] as const;

/** A selection as the console's query string or form carries it: the fields to keep in hidden inputs, and the selection itself. */
export interface ConsoleSelection {
  fields: Array<[string, string]>;
  selection: ReplaySelection;
}

/**
 * Read a selection from the events list's query (or the Start form):
 * filters by their names, or `ids` repeated or comma-separated. A value a
 * person mistyped is a 400 `AppError` saying what to fix.
 */
export function readConsoleSelection(get: (name: string) => string[]): ConsoleSelection {
  const fields: Array<[string, string]> = [];
  const value = (name: string) => {
    const found = get(name).find((v) => v.trim() !== '');
    if (found === undefined) return undefined;
    if (found.length > 400) throw new AppError('bad_request', `The ${name} filter is too long (at most 400 characters).`);
    fields.push([name, found]);
    return found;
  };
  const rawIds = get('ids')
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
  if (rawIds.some((v) => !/^\d{1,15}$/.test(v))) throw new AppError('bad_request', 'Event ids are positive whole numbers, e.g. ids=12,15.');
  const f = Object.fromEntries(SELECTION_KEYS.map((key) => [key, value(key)])) as Record<(typeof SELECTION_KEYS)[number], string | undefined>;
  if (f.source && !/^[a-z0-9-]{1,40}$/.test(f.source)) throw new AppError('bad_request', 'A source is a route name like payments or auth.');
  const ids = rawIds.length > 0 ? rawIds.map(Number) : undefined;
  if (ids) fields.push(['ids', rawIds.join(',')]);
  const selection = selectionOf(
    { source: f.source, status: f.status, type: f.type, handler: f.handler, from: f.from, to: f.to, search: f.q, where: f.where, parked: f.parked === 'true' },
    ids,
  );
  return { fields, selection };
}
