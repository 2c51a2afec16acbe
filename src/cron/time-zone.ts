/** The zone a schedule is read in when neither platform.json nor the job file names one (Vercel Cron's only zone). */
export const DEFAULT_TIME_ZONE = 'UTC';

/** Whether `zone` is an IANA time zone this Node knows ("Europe/Berlin"); a typo would otherwise run at the wrong hour. */
export function isTimeZone(zone: string): boolean {
  if (zone === 'UTC' || zone === 'Etc/UTC') return true; // the default: no Intl, whose first use loads ICU (~50 ms of start-up)
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** How a zone is named to the user in messages. */
export const TIME_ZONE_EXAMPLES = '"Europe/Berlin", "America/New_York" or "UTC"';

const formatters = new Map<string, Intl.DateTimeFormat>();

/** `2026-11-24 09:00 Europe/Berlin` — a tick as a person in that zone reads it (UTC is shown as such). */
export function zonedTime(at: Date | number, zone: string): string {
  let format = formatters.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('sv-SE', {
      timeZone: zone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    });
    formatters.set(zone, format);
  }
  const text = format.format(new Date(at));
  return `${text.endsWith(':00') ? text.slice(0, -3) : text} ${zone}`;
}

/** A tick for a listing: `2026-11-24 08:00:00Z` in UTC, else `2026-11-24 09:00 Europe/Berlin (08:00Z)`. */
export function tickInZone(at: Date | number | string, zone: string): string {
  const date = new Date(at);
  const utc = date
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d{3}Z$/, 'Z');
  if (zone === 'UTC' || zone === 'Etc/UTC') return utc;
  return `${zonedTime(date, zone)} (${utc.slice(11, 16)}Z)`;
}
