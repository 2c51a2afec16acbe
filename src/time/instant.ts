const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;

/** What every date message tells a person to write instead (docs/configuration.md#dates-and-times). */
export const INSTANT_HINT = 'write an ISO 8601 date or time: 2026-11-20 or 2026-11-20T08:00 (both UTC), or 2026-11-20T08:00:00+01:00 (that offset)';

/** A date or time that does not read: its message names the input, what was written and what to write. */
export class InstantError extends Error {
  readonly code = 'invalid_time';
  constructor(name: string, text: string) {
    super(`${name} "${text.slice(0, 40)}" is not a date or time: ${INSTANT_HINT}.`);
    this.name = 'InstantError';
  }
}

/** The offset `Z`, `+01`, `+0100` or `+01:00` in minutes east of UTC; undefined when out of range. */
function offsetMinutes(text: string): number | undefined {
  if (text.toUpperCase() === 'Z') return 0;
  const hours = Number(text.slice(1, 3));
  const minutes = Number(text.slice(3).replace(':', '') || '0');
  if (hours > 23 || minutes > 59) return undefined;
  return (text[0] === '-' ? -1 : 1) * (hours * 60 + minutes);
}

/**
 * The one reader of a date or time a person types (`from`, `to`, `since`,
 * the console's filters, the CLI's flags, the admin API's bodies). ISO 8601
 * only: a time with an offset (`Z`, `+01:00`) is that instant; a date
 * (`2026-11-20`, midnight) or a time without one (`2026-11-20T08:00`, what a
 * browser's `datetime-local` input sends) is UTC, as every time hookrun shows
 * is UTC; never the server's zone, so the same text selects the same events
 * on every machine. Undefined when it does not read or names no real day.
 */
export function readInstant(text: string): Date | undefined {
  const match = ISO.exec(text.trim());
  if (!match) return undefined;
  const [, year, month, day, hour = '0', minute = '0', second = '0', fraction = '', offset = 'Z'] = match;
  const shift = offsetMinutes(offset);
  if (shift === undefined || Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59) return undefined;
  const ms = Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second), Number(fraction.padEnd(3, '0').slice(0, 3)));
  const local = new Date(ms);
  if (local.getUTCFullYear() !== Number(year) || local.getUTCMonth() !== Number(month) - 1 || local.getUTCDate() !== Number(day)) return undefined;
  return new Date(ms - shift * 60_000);
}

/** A date or time `name` carries, or an InstantError naming it. */
export function parseInstant(text: string, name: string): Date {
  const at = readInstant(text);
  if (!at) throw new InstantError(name, text);
  return at;
}
