import type { Clock } from '../clock.js';
import type { Config } from '../config/config.js';
import type { StripeApi } from '../payments-api/stripe-client.js';
import type { Database } from '../db/database.js';
import type { ClaimInput, CronTrigger } from './runs-sql.js';
import type { RunLimits } from './limits-sql.js';
import type { Logger } from '../log.js';
import type { CatchUpPolicy, JobPolicies, OverlapPolicy, RetryPolicy } from '../api/define-job.js';
import { backoffMs } from '../backoff.js';
import { parseDuration } from '../time/duration.js';
import { isTimeZone, TIME_ZONE_EXAMPLES } from './time-zone.js';

/**
 * What the engine's own jobs get (`cron/jobs/*.ts`, HTTP targets): the
 * engine's database, every setting and the Stripe client. A project's job
 * never sees it: `cron/project-job.ts` hands it the public `JobContext`
 * (api/define-job.ts) built from this one.
 */
export interface EngineJobContext {
  db: Database;
  /** hookrun's settings, read once at start-up. */
  config: Config;
  /** The service's one Stripe API client (STRIPE_SECRET_KEY); undefined without a key. */
  stripe: StripeApi | undefined;
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
  /** W3C Trace Context headers naming this run's span (OpenTelemetry on), for an outgoing request; `{}` when off. */
  traceHeaders(): Record<string, string>;
}

/** An engine job as its file writes it (`export default { … } satisfies EngineJobSpec`): the public policies, and `run` over the engine's context. */
export interface EngineJobSpec extends JobPolicies {
  run(context: EngineJobContext): Promise<void> | void;
}

/** A job with every policy decided; what the registry hands to the runner (a project's job adapted to it when it loads). */
export interface ResolvedJob {
  description: string;
  timeoutMs: number;
  overlap: OverlapPolicy;
  catchUp: CatchUpPolicy;
  catchUpWindowMs: number;
  catchUpMax: number;
  retries: Required<RetryPolicy>;
  /** The job file's zone; platform.json's entry wins over it. */
  timezone: string | undefined;
  /** An HTTP target's `concurrency` and `rateLimit`, enforced when a run is claimed (with `concurrency`, `overlap` does not apply). */
  limits?: RunLimits;
  run(context: EngineJobContext): Promise<void> | void;
}

const DEFAULT_CATCH_UP_WINDOW_MS = 24 * 3_600_000;
const DEFAULT_CATCH_UP_MAX = 24;
const NO_RETRIES: Required<RetryPolicy> = Object.freeze({ attempts: 1, backoff: 'exponential', delayMs: 30_000 });

function readRetries(spec: JobPolicies['retries']): Required<RetryPolicy> {
  if (spec === undefined) return NO_RETRIES;
  const attempts = spec?.attempts;
  if (!Number.isInteger(attempts) || attempts < 1 || attempts > 100)
    throw new TypeError('defineJob: retries.attempts must be a whole number from 1 to 100 (the first run included)');
  const backoff = spec.backoff ?? 'exponential';
  if (backoff !== 'exponential' && backoff !== 'fixed') throw new TypeError('defineJob: retries.backoff must be "exponential" or "fixed"');
  const delayMs = spec.delayMs ?? NO_RETRIES.delayMs;
  if (!Number.isInteger(delayMs) || delayMs < 0 || delayMs > 86_400_000)
    throw new TypeError('defineJob: retries.delayMs must be a whole number of ms from 0 to 86400000');
  return Object.freeze({ attempts, backoff, delayMs });
}

/** No retry of a cron run waits longer than this. */
const MAX_RETRY_DELAY_MS = 6 * 3_600_000;

/** How long after failed attempt `attempt` (1-based) the next one is due: hookrun's one backoff, without jitter. */
export function retryDelayMs(policy: Required<RetryPolicy>, attempt: number): number {
  return policy.backoff === 'fixed' ? policy.delayMs : backoffMs(attempt, { baseMs: policy.delayMs, maxMs: MAX_RETRY_DELAY_MS });
}

/**
 * The claim's overlap flags: by the job's overlap policy, unless it has a
 * `concurrency` (then the database counts the running runs, and one over the
 * limit waits: never skipped for overlap).
 */
export function overlapFlags(definition: ResolvedJob, busyHere: boolean): Pick<ClaimInput, 'skipIfRunning' | 'queueIfRunning' | 'busyHere'> {
  if (definition.limits?.concurrency !== undefined) return { skipIfRunning: false, queueIfRunning: false, busyHere: false };
  return {
    skipIfRunning: definition.overlap === 'skip',
    queueIfRunning: definition.overlap === 'queue-one',
    busyHere: definition.overlap !== 'allow' && busyHere,
  };
}

/** Default job timeout; also how long a crashed instance's `running` row blocks the job. */
export const DEFAULT_JOB_TIMEOUT_MS = 5 * 60_000;
const MAX_JOB_TIMEOUT_MS = 24 * 60 * 60_000;

/**
 * Decide every policy of a job as its file wrote them (a project's
 * `defineJob({ … })` or a shipped job's spec), or throw naming the bad one:
 * the loader adds the file, so a typo stops start-up instead of silently
 * using a default. Messages start with `defineJob:`, the call a project wrote.
 */
export function resolveJob(spec: EngineJobSpec): ResolvedJob {
  if (typeof spec !== 'object' || spec === null || typeof spec.run !== 'function') {
    throw new TypeError('defineJob: pass { run: async (context) => { … } }');
  }
  const timeoutMs = spec.timeoutMs ?? DEFAULT_JOB_TIMEOUT_MS;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_JOB_TIMEOUT_MS) {
    throw new TypeError(`defineJob: timeoutMs must be a whole number of milliseconds from 1 to ${MAX_JOB_TIMEOUT_MS}`);
  }
  const overlap = spec.overlap ?? 'skip';
  if (!['skip', 'allow', 'queue-one'].includes(overlap)) throw new TypeError('defineJob: overlap must be "skip", "allow" or "queue-one"');
  const catchUp = spec.catchUp ?? 'latest';
  if (!['latest', 'none', 'all'].includes(catchUp)) throw new TypeError('defineJob: catchUp must be "latest", "none" or "all"');
  let catchUpWindowMs: number;
  try {
    catchUpWindowMs = parseDuration(spec.catchUpWindow ?? DEFAULT_CATCH_UP_WINDOW_MS, 'catchUpWindow', { zero: true });
  } catch (error) {
    throw new TypeError(`defineJob: ${(error as Error).message}`);
  }
  const catchUpMax = spec.catchUpMax ?? DEFAULT_CATCH_UP_MAX;
  if (!Number.isInteger(catchUpMax) || catchUpMax < 1 || catchUpMax > 1000) throw new TypeError('defineJob: catchUpMax must be a whole number from 1 to 1000');
  const retries = readRetries(spec.retries);
  if (spec.timezone !== undefined && (typeof spec.timezone !== 'string' || !isTimeZone(spec.timezone))) {
    throw new TypeError(`defineJob: timezone "${String(spec.timezone)}" is not an IANA time zone (use ${TIME_ZONE_EXAMPLES})`);
  }
  return Object.freeze({
    description: spec.description ?? '',
    timeoutMs,
    overlap,
    catchUp,
    catchUpWindowMs,
    catchUpMax,
    retries,
    timezone: spec.timezone,
    run: spec.run,
  });
}
