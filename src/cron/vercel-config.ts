import { ConfigError } from '../errors.js';
import type { ScheduledJob } from './schedule.js';
import { vercelIncompatibilities } from './schedule.js';
import { DEFAULT_TIME_ZONE } from './time-zone.js';

/** The drain route's name under `/cron/` (hookrun/next serves it; a job file may not take it). */
export const DRAIN_JOB = 'hookrun-drain';

/** One entry of vercel.json `crons` (Vercel Cron Jobs: UTC only). */
export interface VercelCron {
  path: string;
  schedule: string;
}

/** One entry of vercel.json `schedules` (Vercel Schedules): a path target, in a time zone. */
export interface VercelSchedule {
  schedule: string;
  path: string;
  timezone?: string;
  requestMethod: 'GET';
}

/** What `hookrun vercel` writes into vercel.json. */
export interface VercelEntries {
  crons?: VercelCron[];
  schedules?: Record<string, VercelSchedule>;
}

/** How to write the entries. */
export interface VercelOptions {
  /** Where the catch-all route is mounted, e.g. `/api` for `app/api/[...hookrun]/route.ts`. */
  basePath: string;
  /** The drain's expression (default every minute; Vercel's Hobby plan allows only daily crons). */
  drainSchedule: string;
  /** Write Vercel Schedules (time zones) instead of Cron Jobs (UTC only). */
  schedules: boolean;
}

/** `/api/` + `cron/<job>`, with exactly one slash between. */
export function mountedPath(basePath: string, job: string): string {
  const base = basePath.trim().replace(/\/+$/, '');
  return `${base.startsWith('/') || base === '' ? base : `/${base}`}/cron/${job}`;
}

/**
 * platform.json's schedules as Vercel's own entries, plus the drain every
 * minute. Vercel Cron Jobs read every expression in UTC, so a job with a time
 * zone is refused there (Schedules take a time zone); an expression Vercel
 * would refuse is refused here, with the reason, before a deploy fails on it.
 */
export function vercelEntries(scheduled: readonly ScheduledJob[], options: VercelOptions): VercelEntries {
  if (scheduled.some((s) => s.job === DRAIN_JOB)) {
    throw new ConfigError(`A job named "${DRAIN_JOB}" would hide hookrun's drain route; rename jobs/${DRAIN_JOB}.ts.`);
  }
  const problems = [...scheduled.map((s) => ({ job: s.job, expression: s.schedule.expression })), { job: DRAIN_JOB, expression: options.drainSchedule }]
    .map(({ job, expression }) => ({ job, reasons: vercelIncompatibilities(expression), expression }))
    .filter((p) => p.reasons.length > 0);
  if (problems.length > 0) {
    throw new ConfigError(
      `Vercel would refuse these schedules: ${problems.map((p) => `${p.job} "${p.expression}" (${p.reasons.join('; ')})`).join(', ')}. Write them with 5 numeric fields.`,
    );
  }
  const drain = { job: DRAIN_JOB, expression: options.drainSchedule, timezone: DEFAULT_TIME_ZONE };
  const all = [...scheduled.map((s) => ({ job: s.job, expression: s.schedule.expression, timezone: s.schedule.timezone })), drain];
  if (options.schedules) {
    const schedules: Record<string, VercelSchedule> = {};
    for (const entry of all) {
      schedules[entry.job] = {
        schedule: entry.expression,
        path: mountedPath(options.basePath, entry.job),
        ...(entry.timezone === DEFAULT_TIME_ZONE ? {} : { timezone: entry.timezone }),
        requestMethod: 'GET',
      };
    }
    return { schedules };
  }
  const zoned = all.filter((entry) => entry.timezone !== DEFAULT_TIME_ZONE);
  if (zoned.length > 0) {
    throw new ConfigError(
      `Vercel Cron Jobs run in UTC only, and ${zoned.map((z) => `${z.job} runs in ${z.timezone}`).join(', ')}: run \`hookrun vercel --schedules\` to write Vercel Schedules, which take a time zone.`,
    );
  }
  return { crons: all.map((entry) => ({ path: mountedPath(options.basePath, entry.job), schedule: entry.expression })) };
}

/**
 * vercel.json with hookrun's entries in place of the ones it wrote before
 * (those under `<basePath>/cron/`); everything else in the file is kept as is.
 */
export function mergeVercelJson(existing: Record<string, unknown>, entries: VercelEntries, basePath: string): Record<string, unknown> {
  const ours = mountedPath(basePath, '');
  const merged: Record<string, unknown> = { ...existing };
  const keptCrons = (Array.isArray(existing.crons) ? (existing.crons as VercelCron[]) : []).filter((c) => !String(c?.path ?? '').startsWith(ours));
  const keptSchedules = Object.fromEntries(
    Object.entries((existing.schedules ?? {}) as Record<string, VercelSchedule>).filter(([, s]) => !String(s?.path ?? '').startsWith(ours)),
  );
  const crons = [...keptCrons, ...(entries.crons ?? [])];
  const schedules = { ...keptSchedules, ...(entries.schedules ?? {}) };
  if (crons.length > 0) merged.crons = crons;
  else delete merged.crons;
  if (Object.keys(schedules).length > 0) merged.schedules = schedules;
  else delete merged.schedules;
  return merged;
}
