import type { Config } from '../config/config.js';
import { ConfigError } from '../errors.js';
import type { CronEntry } from '../config/platform-entries.js';
import type { JobPolicies } from '../api/define-job.js';
import { DEFAULT_JOB_TIMEOUT_MS, resolveJob, type ResolvedJob } from './job.js';
import { displayPath } from '../module-files.js';
import type { RunLimits } from './limits-sql.js';
import { DurationError, parseDuration } from '../time/duration.js';
import { JOB_NAME, type JobRegistry } from './registry.js';
import { HOOKRUN_VERSION } from '../version.js';

/** What an HTTP target sees, as Vercel Cron sends `vercel-cron/1.0`. */
export const CRON_USER_AGENT = `hookrun-cron/${HOOKRUN_VERSION}`;

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '0.0.0.0', '[::]']);

/** A target on this machine: its plain http:// never crosses a network. */
function isLoopback(url: URL): boolean {
  return LOOPBACK_HOSTS.has(url.hostname) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(url.hostname);
}

/** A URL to show in messages and errors: no query string or credentials (they may hold a token). */
const shownUrl = (url: URL) => `${url.origin}${url.pathname}`;

/** True when calling `url` would call this hookrun's own `/cron/` routes: a job that triggers itself for ever. */
function callsItself(url: URL, config: Pick<Config, 'port' | 'host'>): boolean {
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const ownHost = LOOPBACK_HOSTS.has(url.hostname) || (config.host !== undefined && url.hostname === config.host);
  return ownHost && port === config.port && url.pathname.startsWith('/cron/');
}

const MAX_CONCURRENCY = 100;
const shown = (value: unknown) => (typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value)));

/**
 * The entry's `concurrency` and `rateLimit`, checked: a ConfigError names the
 * entry, the target, the setting and the fix. Undefined when it sets neither.
 */
function targetLimits(entry: CronEntry, where: string): RunLimits | undefined {
  const fail = (setting: string, problem: string) => new ConfigError(`${where}.${setting} (target "${entry.name}"): ${problem}`);
  const limits: RunLimits = {};
  const { concurrency, rateLimit } = entry;
  if (concurrency !== undefined) {
    if (!Number.isInteger(concurrency) || (concurrency as number) < 1 || (concurrency as number) > MAX_CONCURRENCY)
      throw fail(
        'concurrency',
        `${shown(concurrency)} is not a whole number from 1 to ${MAX_CONCURRENCY}; write e.g. "concurrency": 2 for at most 2 runs of it at once, or remove it.`,
      );
    if (entry.policy?.overlap !== undefined)
      throw fail(
        'concurrency',
        'the entry sets "overlap" too; with "concurrency" a run over the limit waits its turn, so remove "overlap" (or remove "concurrency" to keep the overlap policy).',
      );
    limits.concurrency = concurrency as number;
  }
  if (rateLimit !== undefined) {
    const example = 'like { "limit": 10, "period": "1m" } (at most 10 starts a minute, one every 6 s)';
    if (typeof rateLimit !== 'object' || rateLimit === null || Array.isArray(rateLimit) || Object.keys(rateLimit).some((k) => k !== 'limit' && k !== 'period'))
      throw fail('rateLimit', `must be an object with "limit" and "period" only, ${example}.`);
    const { limit, period } = rateLimit as Record<string, unknown>;
    let periodMs: number;
    try {
      periodMs = parseDuration(period, 'rateLimit.period');
    } catch (error) {
      if (error instanceof DurationError) throw new ConfigError(`${where}: ${error.message}`);
      throw error;
    }
    if (!Number.isInteger(limit) || (limit as number) < 1 || (limit as number) > periodMs)
      throw fail('rateLimit.limit', `${shown(limit)} is not a whole number from 1 to ${periodMs} (at most one start per ms); write one ${example}.`);
    limits.rate = { limit: limit as number, periodMs };
  }
  return limits.concurrency === undefined && limits.rate === undefined ? undefined : limits;
}

/**
 * A job in any runtime: each tick calls `url`, as Vercel Cron calls a route,
 * with `Authorization: Bearer <token>` when the entry names a `tokenEnv` (its
 * own token: hookrun's CRON_SECRET never leaves for a target). A 2xx within
 * the time limit is success; any other answer, a redirect, or no answer is a
 * failure (and takes the same exactly-once claim and history as a job file).
 */
function httpTargetJob(entry: Required<Pick<CronEntry, 'name' | 'url'>> & CronEntry, limits: RunLimits | undefined): ResolvedJob {
  const url = new URL(entry.url);
  const method = entry.method ?? 'GET';
  const job = resolveJob({
    ...(entry.policy as JobPolicies),
    description: `${method} ${shownUrl(url)}`,
    timeoutMs: entry.timeoutMs ?? DEFAULT_JOB_TIMEOUT_MS,
    async run({ signal, traceHeaders }) {
      if (entry.tokenEnv !== undefined && entry.token === undefined) {
        throw new Error(
          `${entry.tokenEnv} is not set: set it to the token ${shownUrl(url)} expects, or remove "tokenEnv" from the entry to call it without one`,
        );
      }
      const headers: Record<string, string> = { ...traceHeaders(), 'user-agent': CRON_USER_AGENT };
      if (entry.token !== undefined) headers.authorization = `Bearer ${entry.token}`;
      let response: Response;
      try {
        response = await fetch(url, { method, headers, signal, redirect: 'manual' });
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        const cause = (error as { cause?: { code?: string } }).cause?.code;
        throw new Error(`${method} ${shownUrl(url)}: no answer (${cause ?? (error as Error).message})`);
      }
      await response.body?.cancel().catch(() => undefined);
      if (response.status < 200 || response.status > 299) throw new Error(`${method} ${shownUrl(url)} answered ${response.status}; a 2xx is success`);
    },
  });
  return limits ? Object.freeze({ ...job, limits }) : job;
}

/**
 * The job files plus one job per platform.json entry with a `url`. Throws a
 * ConfigError for a name a job file already has, a URL that is not absolute
 * http(s), a plain http:// one on another machine without `allowHttp`, one
 * that calls this hookrun's own `/cron/` routes, or a bad `concurrency` or
 * `rateLimit`.
 */
export function withHttpTargets(files: JobRegistry, config: Pick<Config, 'crons' | 'port' | 'host' | 'platformConfigPath'>): JobRegistry {
  const jobs = new Map(files);
  config.crons.forEach((entry, index) => {
    if (entry.url === undefined || entry.name === undefined) return;
    const where = `${displayPath(config.platformConfigPath)} crons[${index}]`;
    if (!JOB_NAME.test(entry.name))
      throw new ConfigError(`${where}.name "${entry.name}": use lowercase letters, digits and dashes (it becomes /cron/${entry.name.toLowerCase()}).`);
    if (files.has(entry.name)) throw new ConfigError(`${where}.name "${entry.name}": a job file src/cron/jobs/${entry.name}.ts has this name too; rename one.`);
    let url: URL | undefined;
    try {
      url = new URL(entry.url);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:'))
      throw new ConfigError(`${where}.url: must be an absolute http(s) URL like "https://billing.internal/cron/sync".`);
    if (url.protocol === 'http:' && !isLoopback(url) && entry.allowHttp !== true) {
      throw new ConfigError(
        `${where}.url "${shownUrl(url)}": plain http:// to another machine sends each call${entry.tokenEnv ? ' and its token' : ''} unencrypted. Use https://, or add "allowHttp": true to this entry if that network path is trusted.`,
      );
    }
    if (callsItself(url, config)) {
      throw new ConfigError(
        `${where}.url "${shownUrl(url)}": calls this hookrun's own /cron/ routes, so each tick would run a job through itself. Schedule the job by "path" instead.`,
      );
    }
    const limits = targetLimits(entry, where);
    try {
      jobs.set(entry.name, httpTargetJob({ ...entry, name: entry.name, url: entry.url }, limits));
    } catch (error) {
      throw new ConfigError(`${where}: ${(error as Error).message.replace(/^defineJob: /, '').replace(/\.$/, '')}.`);
    }
  });
  return jobs;
}
