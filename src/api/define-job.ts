import type { Logger } from 'pino';
import { readEnvNames } from './env-names.js';

/**
 * `skip`: a run while another runs is recorded `skipped` (HTTP 409). `allow`:
 * runs may overlap. `queue-one`: a tick that comes while a run is going waits
 * and runs as soon as it ends; a third is skipped (Temporal's "buffer one").
 */
export type OverlapPolicy = 'skip' | 'allow' | 'queue-one';

/**
 * After downtime (or a pause resumed with catch-up): `latest` runs the latest
 * missed tick once; `none` waits for the next tick; `all` runs every missed
 * tick within `catchUpWindow`, oldest first, at most `catchUpMax`.
 */
export type CatchUpPolicy = 'latest' | 'none' | 'all';

/** Retry a failed scheduled run: `attempts` in all (the first included), waiting `delayMs` (default 30 s), doubled each time when `backoff` is exponential (the default). */
export interface RetryPolicy {
  attempts: number;
  backoff?: 'exponential' | 'fixed';
  delayMs?: number;
}

/** What started a run, as its history records it: the schedule, `/cron/<name>` over HTTP, or `hookrun cron run`. */
export type JobTrigger = 'schedule' | 'http' | 'cli';

/** SQL inside `db.transaction`: every statement commits or rolls back with the others. */
export interface JobTransaction {
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
}

/**
 * The database hookrun shares with your product, for SQL only: your tables
 * and hookrun's. A job has no delivery to commit with, so each `query`
 * commits on its own; `transaction(async (tx) => …)` groups statements (a
 * throw rolls them all back). Keep transactions short.
 */
export interface JobDatabase {
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  transaction<R>(fn: (tx: JobTransaction) => Promise<R>): Promise<R>;
}

/** What a job's `run` gets: SQL, its settings, a logger, the signal that says when to stop, and which run this is. */
export interface JobContext<E extends string = never> {
  db: JobDatabase;
  /** The settings this job named in `env`, each checked present at start-up; no other secret. */
  env: Readonly<Record<E, string>>;
  /** Aborted on timeout or shutdown: pass it on to `fetch` and stop early. */
  signal: AbortSignal;
  /** A logger with the job's name, run id and trigger on every line; what it logs is kept with the run. */
  log: Logger;
  /** When this run started. */
  now: Date;
  trigger: JobTrigger;
  /** The schedule tick this run is for; null for http and cli runs. */
  scheduledFor: Date | null;
  /** This run's id in the history (`hookrun cron runs`, the dashboard). */
  runId: number;
}

/** A job's policies as its file writes them; each is checked when the project loads, naming the file. */
export interface JobPolicies {
  description?: string;
  /** Abort and record `failed` after this long (default 5 minutes). */
  timeoutMs?: number;
  overlap?: OverlapPolicy;
  catchUp?: CatchUpPolicy;
  /** With catchUp `all`: missed ticks older than this are dropped (a duration: ms or `'30s'`, `'12h'`, `'1d'`; default 24 h). */
  catchUpWindow?: number | string;
  /** With catchUp `all`: at most this many missed ticks run (default 24). */
  catchUpMax?: number;
  /** Retry a failed scheduled run (default: none, as Vercel). */
  retries?: RetryPolicy;
  /** IANA zone its platform.json expression is read in, unless the entry names one (default UTC). */
  timezone?: string;
}

/** What a job file writes: the run function, the settings it reads and, optionally, its policies. */
export interface JobSpec<E extends string = never> extends JobPolicies {
  /** Environment variables it needs (start-up refuses while one is unset); `ctx.env` has these and nothing else. */
  env?: readonly E[];
  run(context: JobContext<E>): Promise<void> | void;
}

/** A job as `defineJob` returns it (its spec, frozen); its name is its file's. */
export interface JobDefinition<E extends string = string> extends Readonly<JobPolicies> {
  readonly env: readonly E[];
  run(context: JobContext<E>): Promise<void> | void;
}

/**
 * Declare a job: `export default defineJob({ env: ['SLACK_TOKEN'], run: async ({ db, env, signal }) => … })`
 * in a project's `jobs/<name>.ts` makes `/cron/<name>`. The shape is checked
 * here; the policies and settings when the project loads, so a typo stops
 * start-up naming the file instead of silently using a default.
 */
export function defineJob<const E extends string = never>(spec: JobSpec<E>): JobDefinition<E> {
  if (typeof spec !== 'object' || spec === null || typeof spec.run !== 'function') {
    throw new TypeError('defineJob: pass { run: async (context) => { … } }');
  }
  const env = readEnvNames(spec.env, 'defineJob') as readonly E[];
  return Object.freeze({ ...spec, env, run: spec.run });
}
