import type { CustomScheme } from '../webhooks/providers/custom.js';

/**
 * One entry of platform.json `crons`, as written (validated by cron/schedule.ts):
 * Vercel's `{ path, schedule }` for a job file, or `{ name, url, schedule }` for
 * a job in any runtime that answers HTTP; both may add a time zone and a time-out.
 */
export interface CronEntry {
  /** `/cron/<job>`: the job file `jobs/<job>.ts` of the project (or a shipped job). */
  path?: string;
  /** An HTTP target's job name (its route `/cron/<name>` and its history). */
  name?: string;
  /** An HTTP target: called on each tick, with `Authorization: Bearer <the tokenEnv value>` when it names one. */
  url?: string;
  /** An HTTP target's own token: the env variable whose value is its bearer (never hookrun's CRON_SECRET). */
  tokenEnv?: string;
  /** That variable's value, read at start-up; undefined when unset (the runs then fail, saying so). */
  token?: string;
  /** Call a plain `http://` URL on another machine (the token crosses the network unencrypted); default false. */
  allowHttp?: boolean;
  /** An HTTP target's method (default GET, as Vercel calls). */
  method?: 'GET' | 'POST';
  schedule: string;
  /** IANA zone the expression is read in (default: the job file's, else UTC). */
  timezone?: string;
  /** An HTTP target's time limit in ms (a job file sets its own). */
  timeoutMs?: number;
  /** An HTTP target's policies, as a job file writes them (checked as a job file's are, by cron/job.ts). */
  policy?: Record<string, unknown>;
  /** An HTTP target's most runs at once across instances, as written (a whole number; checked by `withHttpTargets`). */
  concurrency?: unknown;
  /** An HTTP target's most starts per period across instances, as written (`{ limit, period }`; checked by `withHttpTargets`). */
  rateLimit?: unknown;
}

/**
 * One entry of platform.json `webhooks`: a sender hookrun does not ship,
 * verified by an HMAC of the body (or of `<timestamp>.<body>`) in a header.
 * The custom sender's own shape (type only: the providers import no config).
 */
export type WebhookSchemeEntry = CustomScheme;
