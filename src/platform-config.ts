import { readFileSync } from 'node:fs';
import { ConfigError } from './errors.js';

/**
 * One entry of platform.json `crons`, as written (validated by cron/schedule.ts):
 * Vercel's `{ path, schedule }` for a job file, or `{ name, url, schedule }` for
 * a job in any runtime that answers HTTP; both may add a time zone and a time-out.
 */
export interface CronEntry {
  /** `/cron/<job>`: the job file `src/cron/jobs/<job>.ts`. */
  path?: string;
  /** An HTTP target's job name (its route `/cron/<name>` and its history). */
  name?: string;
  /** An HTTP target: called on each tick with `Authorization: Bearer $CRON_SECRET`. */
  url?: string;
  /** An HTTP target's method (default GET, as Vercel calls). */
  method?: 'GET' | 'POST';
  schedule: string;
  /** IANA zone the expression is read in (default: the job file's, else UTC). */
  timezone?: string;
  /** An HTTP target's time limit in ms (a job file sets its own). */
  timeoutMs?: number;
  /** An HTTP target's policies, as a job file writes them (`defineJob` checks them). */
  policy?: Record<string, unknown>;
}

/** Fields an HTTP target may carry that a job file sets in `defineJob`. */
const POLICY_KEYS = ['retries', 'catchUp', 'catchUpWindow', 'catchUpMax', 'overlap'];

const ENTRY_KEYS = new Set(['path', 'name', 'url', 'method', 'schedule', 'timezone', 'timeoutMs', ...POLICY_KEYS]);

function readEntry(entry: unknown, where: string): CronEntry {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw new ConfigError(`${where}: must be an object with "path" and "schedule" (or "name", "url" and "schedule").`);
  const raw = entry as Record<string, unknown>;
  const unknownKey = Object.keys(raw).find((k) => !ENTRY_KEYS.has(k));
  if (unknownKey) throw new ConfigError(`${where}.${unknownKey}: not a cron entry field (use ${[...ENTRY_KEYS].join(', ')}).`);
  const text = (key: string, example: string): string | undefined => {
    const value = raw[key];
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || value.trim() === '') throw new ConfigError(`${where}.${key}: must be a non-empty string like ${example}.`);
    return value;
  };
  const schedule = text('schedule', '"0 1 * * *"');
  if (schedule === undefined) throw new ConfigError(`${where}.schedule: must be a cron expression string like "0 1 * * *".`);
  const path = text('path', '"/cron/keep-alive"');
  const name = text('name', '"billing-sync"');
  const url = text('url', '"https://billing.internal/cron/sync"');
  if (path === undefined && url === undefined) throw new ConfigError(`${where}.path: must be a string like "/cron/keep-alive" (or give "name" and "url" for an HTTP target).`);
  if (path !== undefined && (url !== undefined || name !== undefined)) throw new ConfigError(`${where}: has "path" and "${url !== undefined ? 'url' : 'name'}"; a job is either a file ("path") or an HTTP target ("name" and "url").`);
  if (url !== undefined && name === undefined) throw new ConfigError(`${where}.name: an HTTP target needs a name for its route and history, like "billing-sync".`);
  const method = text('method', '"POST"')?.toUpperCase();
  if (method !== undefined && (url === undefined || (method !== 'GET' && method !== 'POST'))) throw new ConfigError(`${where}.method: only an HTTP target has one, and it is "GET" (default) or "POST".`);
  const timeoutMs = raw.timeoutMs;
  if (timeoutMs !== undefined && (url === undefined || !Number.isInteger(timeoutMs) || (timeoutMs as number) < 1 || (timeoutMs as number) > 86_400_000)) {
    throw new ConfigError(`${where}.timeoutMs: only an HTTP target has one (a job file sets its own), a whole number of ms from 1 to 86400000.`);
  }
  const policyKeys = POLICY_KEYS.filter((k) => raw[k] !== undefined);
  if (policyKeys.length > 0 && url === undefined) throw new ConfigError(`${where}.${policyKeys[0]}: a job file sets its policies in defineJob; only an HTTP target ("url") sets them here.`);
  const policy = policyKeys.length > 0 ? Object.fromEntries(policyKeys.map((k) => [k, raw[k]])) : undefined;
  return { path, name, url, method: method as CronEntry['method'], schedule, timezone: text('timezone', '"Europe/Berlin"'), timeoutMs: timeoutMs as number | undefined, policy };
}

/** Parse the `crons` array of platform.json; shape only, the cron module checks jobs and expressions. */
export function readPlatformConfig(path: string): CronEntry[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new ConfigError(`${path}: cannot be read (${(error as Error).message}).`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${path}: is not valid JSON (${(error as Error).message}). Fix the file or point PLATFORM_CONFIG at another.`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(`${path}: must be a JSON object like { "crons": [ { "path": "/cron/keep-alive", "schedule": "0 1 * * *" } ] }.`);
  }
  const crons = (parsed as { crons?: unknown }).crons;
  if (crons === undefined) return [];
  if (!Array.isArray(crons)) throw new ConfigError(`${path} crons: must be an array of { "path", "schedule" } entries.`);
  return crons.map((entry: unknown, index) => readEntry(entry, `${path} crons[${index}]`));
}
