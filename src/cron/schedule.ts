import { Cron } from 'croner';
import type { CronEntry } from '../config/platform-entries.js';
import { ConfigError } from '../errors.js';
import { JOB_NAME, unbuiltJobHint, type JobRegistry } from './registry.js';
import { DEFAULT_TIME_ZONE, isTimeZone, TIME_ZONE_EXAMPLES } from './time-zone.js';

/** A valid cron expression, read in its time zone (UTC unless one is named). */
export interface CronSchedule {
  readonly expression: string;
  /** IANA zone the expression is read in; ticks are still instants (ms since epoch). */
  readonly timezone: string;
  /** The first tick strictly after `afterMs` (croner works in whole seconds), or null if none. */
  next(afterMs: number): number | null;
  /** The next `count` ticks after `fromMs`. */
  nextRuns(count: number, fromMs: number): Date[];
  /** The latest tick in (afterMs, nowMs], or null: the tick a scheduler owes after a gap. */
  latestBetween(afterMs: number, nowMs: number): number | null;
}

/** One validated platform.json entry, tied to its job. */
export interface ScheduledJob {
  job: string;
  path: string;
  index: number;
  schedule: CronSchedule;
}

const FIVE = ['minute', 'hour', 'day-of-month', 'month', 'day-of-week'] as const;
const RANGES: Record<string, [number, number, string]> = {
  second: [0, 59, ''],
  minute: [0, 59, ''],
  hour: [0, 23, ''],
  'day-of-month': [1, 31, ''],
  month: [1, 12, ' (or JAN-DEC)'],
  'day-of-week': [0, 7, ' (0 or 7 is Sunday, or SUN-SAT)'],
  year: [1, 9999, ''],
};
/** Widening look-back windows for `latestBetween`, so a long gap costs a few croner calls, not one per tick. */
const LOOK_BACK_MS = [60_000, 3_600_000, 86_400_000, 32 * 86_400_000, 367 * 86_400_000, Number.POSITIVE_INFINITY];
const MAX_TICKS_PER_WINDOW = 100_000;

function fieldNames(count: number): readonly string[] {
  if (count === 6) return ['second', ...FIVE];
  if (count === 7) return ['second', ...FIVE, 'year'];
  return FIVE;
}

/** Range-check the numbers of each field, for messages a person can act on ("minute must be 0-59"). */
function checkFields(expression: string): void {
  if (expression.trim().startsWith('@')) return;
  const fields = expression.trim().split(/\s+/);
  if (fields.length < 5 || fields.length > 7) {
    throw new Error(`needs 5 fields (minute hour day-of-month month day-of-week), got ${fields.length}`);
  }
  const names = fieldNames(fields.length);
  fields.forEach((field, i) => {
    const name = names[i]!;
    const [min, max, hint] = RANGES[name]!;
    for (const part of field.split(',')) {
      const [base = '', step] = part.split('/');
      if (step !== undefined && !/^[1-9]\d*$/.test(step)) throw new Error(`${name} step "/${step}" must be a positive whole number`);
      for (const end of base.split('-')) {
        const digits = /^(\d+)/.exec(end);
        if (digits && (Number(digits[1]) < min || Number(digits[1]) > max)) throw new Error(`${name} must be ${min}-${max}${hint}`);
      }
    }
  });
}

/**
 * Parse a cron expression in `timezone` (default UTC). Throws an Error whose
 * message says what is wrong ("minute must be 0-59"); croner has the last
 * word on syntax and on daylight saving: a wall time that does not exist
 * (02:30 as clocks spring forward) runs an hour later, once; one that happens
 * twice (01:30 as they fall back) runs at its first occurrence only.
 */
export function parseSchedule(expression: string, timezone: string = DEFAULT_TIME_ZONE): CronSchedule {
  checkFields(expression);
  if (!isTimeZone(timezone)) throw new Error(`time zone "${timezone}" is not an IANA time zone (use ${TIME_ZONE_EXAMPLES})`);
  let cron: Cron;
  try {
    // utcOffset 0 is UTC without Intl (10x faster than timezone: 'UTC')
    cron = new Cron(expression, timezone === 'UTC' || timezone === 'Etc/UTC' ? { utcOffset: 0 } : { timezone });
  } catch (error) {
    throw new Error((error as Error).message.replace(/^CronPattern: /, ''));
  }
  const fromCroner = (afterMs: number): number | null => cron.nextRun(new Date(afterMs))?.getTime() ?? null;
  if (fromCroner(Date.UTC(2000, 0, 1)) === null) throw new Error('never matches a date (check day-of-month against month)');
  // The scheduler asks about the same cursor on every pass (the latest tick since it, then when to wake), and most
  // passes find no tick due: the first tick after the last time asked about, kept, answers them without croner (in a
  // time zone a pass that found none took about 660 µs of croner's date arithmetic, 0.2 µs now; croner's next tick
  // is 250 µs there against 8 in UTC).
  let kept: { afterMs: number; at: number | null } | undefined;
  const next = (afterMs: number): number | null => {
    if (kept?.afterMs !== afterMs) kept = { afterMs, at: fromCroner(afterMs) };
    return kept.at;
  };
  return {
    expression,
    timezone,
    next,
    nextRuns(count, fromMs) {
      // Walk with next() rather than croner's nextRuns, which lists a spring-forward tick twice.
      const runs: Date[] = [];
      for (let at = next(fromMs); at !== null && runs.length < count; at = next(at)) runs.push(new Date(at));
      return runs;
    },
    latestBetween(afterMs, nowMs) {
      if (Number.isFinite(afterMs)) {
        const first = next(afterMs);
        if (first === null || first > nowMs) return null;
      }
      for (const window of LOOK_BACK_MS) {
        const start = Math.max(afterMs, nowMs - window);
        let latest = next(start);
        if (latest === null || latest > nowMs) {
          if (start === afterMs) return null;
          continue;
        }
        for (let i = 0; i < MAX_TICKS_PER_WINDOW; i++) {
          const after = next(latest);
          if (after === null || after > nowMs) break;
          latest = after;
        }
        return latest;
      }
      return null;
    },
  };
}

/** Why Vercel Cron would refuse an expression croner accepts; empty when Vercel takes it as is. */
export function vercelIncompatibilities(expression: string): string[] {
  const trimmed = expression.trim();
  if (trimmed.startsWith('@')) return [`"${trimmed}" is a nickname; Vercel wants 5 numeric fields`];
  const fields = trimmed.split(/\s+/);
  const reasons: string[] = [];
  if (fields.length !== 5) reasons.push(`it has ${fields.length} fields (seconds${fields.length === 7 ? ' and year' : ''}); Vercel wants exactly 5`);
  const five = fields.length === 5 ? fields : fields.slice(1, 6);
  const named = five.join(' ').match(/[A-Za-z]{3}/);
  if (named) reasons.push(`it uses names like ${named[0].toUpperCase()}; Vercel wants numbers (months 1-12, days of week 0-6)`);
  if (/[LW#?]/.test(five.join(' ').replace(/[A-Za-z]{3}/g, ''))) reasons.push('it uses L, W, # or ?, which Vercel does not support');
  const [, , dom = '*', , dow = '*'] = five;
  if (/(^|[,-])7($|[,\-/#L])/.test(dow)) reasons.push('it uses 7 for Sunday; Vercel wants 0-6');
  if (!['*', '?'].includes(dom) && !['*', '?'].includes(dow)) {
    reasons.push('it sets both day-of-month and day-of-week; Vercel wants one of them to be * (hookrun runs it when either matches, like standard cron)');
  }
  return reasons;
}

/**
 * Check platform.json `crons` against the jobs that exist (job files and the
 * HTTP targets made from the entries). Any problem throws a ConfigError naming
 * the file, the entry and the fix; expressions Vercel would refuse are
 * accepted with a warning that says so. The entry's `timezone` wins over the
 * job file's; the default is UTC.
 */
export function validateCrons(entries: readonly CronEntry[], jobs: JobRegistry, file: string): { scheduled: ScheduledJob[]; warnings: string[] } {
  const seen = new Map<string, number>();
  const scheduled: ScheduledJob[] = [];
  const warnings: string[] = [];
  entries.forEach((entry, index) => {
    const where = `${file} crons[${index}]`;
    const path = entry.path ?? `/cron/${entry.name}`;
    const field = entry.path === undefined ? 'name' : 'path';
    const shown = entry.path ?? entry.name;
    if (!path.startsWith('/cron/')) throw new ConfigError(`${where}.path "${path}": must be under /cron/ (jobs are served at /cron/<job>).`);
    const job = path.slice('/cron/'.length);
    if (!JOB_NAME.test(job)) {
      throw new ConfigError(
        `${where}.${field} "${shown}": must be ${field === 'path' ? '/cron/<job> with a job name of ' : ''}lowercase letters, digits and dashes (no query string or trailing slash).`,
      );
    }
    if (!jobs.has(job)) {
      const list = jobs.size > 0 ? [...jobs.keys()].sort().join(', ') : 'none';
      const unbuilt = unbuiltJobHint(job);
      if (unbuilt) throw new ConfigError(`${where}.path "${path}": ${unbuilt}.`);
      throw new ConfigError(`${where}.path "${path}": no job file src/cron/jobs/${job}.ts (jobs: ${list}). Add the file or fix the path.`);
    }
    const first = seen.get(path);
    if (first !== undefined) throw new ConfigError(`${where}.${field} "${shown}": duplicate of crons[${first}]; give each job one entry.`);
    seen.set(path, index);
    const timezone = entry.timezone ?? jobs.get(job)!.timezone ?? DEFAULT_TIME_ZONE;
    if (!isTimeZone(timezone)) throw new ConfigError(`${where}.timezone "${timezone}": not an IANA time zone; use ${TIME_ZONE_EXAMPLES}.`);
    let schedule: CronSchedule;
    try {
      schedule = parseSchedule(entry.schedule, timezone);
    } catch (error) {
      throw new ConfigError(`${where}.schedule "${entry.schedule}": ${(error as Error).message}`);
    }
    const reasons = vercelIncompatibilities(entry.schedule);
    if (reasons.length > 0) {
      warnings.push(
        `${where}.schedule "${entry.schedule}": Vercel Cron would refuse this (${reasons.join('; ')}). hookrun accepts it and runs it in ${timezone}.`,
      );
    }
    if (entry.tokenEnv !== undefined && entry.token === undefined)
      warnings.push(`${where}.tokenEnv: ${entry.tokenEnv} is not set: each run of ${job} fails, saying so, until it is.`);
    scheduled.push({ job, path, index, schedule });
  });
  return { scheduled, warnings };
}

/** The schedule a scheduled delivery names (UTC, as Vercel Cron reads it); undefined when it names none or one that does not parse. */
export function deliveredSchedule(expression: string | undefined): CronSchedule | undefined {
  if (expression === undefined) return undefined;
  try {
    return parseSchedule(expression);
  } catch {
    return undefined;
  }
}
