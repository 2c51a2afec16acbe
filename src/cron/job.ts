import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import type { CronTrigger } from '../db/cron-runs.js';
import type { Logger } from '../log.js';
import { isTimeZone, TIME_ZONE_EXAMPLES } from './time-zone.js';

/** `skip`: a run while another runs is recorded `skipped` (HTTP 409). `allow`: runs may overlap. */
export type OverlapPolicy = 'skip' | 'allow';

/** After downtime: `latest` runs the latest missed tick once; `none` waits for the next tick. */
export type CatchUpPolicy = 'latest' | 'none';

/** A job gets only what it needs to do its work, and a signal that says when to stop. */
export interface JobContext {
  db: Database;
  /** hookrun's settings, read once at start-up (e.g. `stripe` for the reconcile job). */
  config: Config;
  /** Aborted on timeout or shutdown: pass it on to fetch/queries and stop early. */
  signal: AbortSignal;
  log: Logger;
  clock: Clock;
  /** When this run started (from the injected clock). */
  now: Date;
  trigger: CronTrigger;
  /** The schedule tick this run is for; null for http and cli runs. */
  scheduledFor: Date | null;
  runId: number;
}

/** What a job file writes: the run function and, optionally, its policy. */
export interface JobSpec {
  description?: string;
  /** Abort and record `failed` after this long (default 5 minutes). */
  timeoutMs?: number;
  overlap?: OverlapPolicy;
  catchUp?: CatchUpPolicy;
  /** IANA zone its platform.json expression is read in, unless the entry names one (default UTC). */
  timezone?: string;
  run(context: JobContext): Promise<void> | void;
}

/** A job with every policy decided; what the registry hands to the runner. */
export interface JobDefinition {
  description: string;
  timeoutMs: number;
  overlap: OverlapPolicy;
  catchUp: CatchUpPolicy;
  /** The job file's zone; platform.json's entry wins over it. */
  timezone: string | undefined;
  run(context: JobContext): Promise<void> | void;
}

/** Default job timeout; also how long a crashed instance's `running` row blocks the job. */
export const DEFAULT_JOB_TIMEOUT_MS = 5 * 60_000;
const MAX_JOB_TIMEOUT_MS = 24 * 60 * 60_000;

/**
 * Declare a job: `export default defineJob({ run: async ({ db, signal }) => … })`
 * in `src/cron/jobs/<name>.ts` makes `/cron/<name>`. Throws on a bad policy so
 * a typo in a job file stops start-up instead of silently using a default.
 */
export function defineJob(spec: JobSpec): JobDefinition {
  if (typeof spec !== 'object' || spec === null || typeof spec.run !== 'function') {
    throw new TypeError('defineJob: pass { run: async (context) => { … } }');
  }
  const timeoutMs = spec.timeoutMs ?? DEFAULT_JOB_TIMEOUT_MS;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_JOB_TIMEOUT_MS) {
    throw new TypeError(`defineJob: timeoutMs must be a whole number of milliseconds from 1 to ${MAX_JOB_TIMEOUT_MS}`);
  }
  const overlap = spec.overlap ?? 'skip';
  if (overlap !== 'skip' && overlap !== 'allow') throw new TypeError('defineJob: overlap must be "skip" or "allow"');
  const catchUp = spec.catchUp ?? 'latest';
  if (catchUp !== 'latest' && catchUp !== 'none') throw new TypeError('defineJob: catchUp must be "latest" or "none"');
  if (spec.timezone !== undefined && (typeof spec.timezone !== 'string' || !isTimeZone(spec.timezone))) {
    throw new TypeError(`defineJob: timezone "${String(spec.timezone)}" is not an IANA time zone (use ${TIME_ZONE_EXAMPLES})`);
  }
  return Object.freeze({ description: spec.description ?? '', timeoutMs, overlap, catchUp, timezone: spec.timezone, run: spec.run });
}
