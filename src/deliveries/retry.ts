import { backoffMs } from '../backoff.js';

/** How failed events come back: exponential backoff with jitter, then `dead`. */
export interface RetryPolicy {
  /** Claims before an event is `dead` (config.maxAttempts, default 10). */
  maxAttempts: number;
  /** Delay after the first failed attempt, before jitter. */
  baseDelayMs: number;
  /** No delay grows beyond this. */
  maxDelayMs: number;
}

/**
 * 5 s, 10 s, 20 s … capped at 1 h (with equal jitter each delay is drawn from
 * [d/2, d)). Ten attempts wait nine times, 5 s … 1280 s: about 43 minutes in
 * all before jitter (5 s × (2^9 − 1) = 2555 s), 21 to 43 minutes with it; the
 * cap is not reached until the 11th failure. Raise MAX_ATTEMPTS to span a longer outage.
 */
export const DEFAULT_RETRY_POLICY: Omit<RetryPolicy, 'maxAttempts'> = {
  baseDelayMs: 5_000,
  maxDelayMs: 60 * 60 * 1000,
};

/** Delay before the next attempt after `attempts` failed ones: the shared backoff, with jitter. */
export function computeBackoffMs(attempts: number, policy: Omit<RetryPolicy, 'maxAttempts'>, random: () => number): number {
  return backoffMs(attempts, { baseMs: policy.baseDelayMs, maxMs: policy.maxDelayMs }, random);
}

/** Whether an event that has been claimed `attempts` times may be tried again. */
export function hasAttemptsLeft(attempts: number, policy: Pick<RetryPolicy, 'maxAttempts'>): boolean {
  return attempts < policy.maxAttempts;
}
