/** How a delay grows after consecutive failures. */
export interface BackoffPolicy {
  /** The delay after the first failure (before jitter). */
  baseMs: number;
  /** No delay grows beyond this. */
  maxMs: number;
}

/**
 * The one backoff of hookrun (event retries, the worker and the scheduler
 * waiting out a database outage): the n-th consecutive failure waits
 * d = base·2^(n-1), capped at max. With `random` it uses "equal jitter", a
 * delay in [d/2, d), so retries that failed together spread out while each
 * still at least doubles the previous one's floor; without, exactly d.
 * https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/
 */
export function backoffMs(failures: number, policy: BackoffPolicy, random?: () => number): number {
  const exponent = Math.min(Math.max(failures, 1) - 1, 30);
  const ceiling = Math.min(policy.maxMs, policy.baseMs * 2 ** exponent);
  return random ? Math.round(ceiling / 2 + (ceiling / 2) * random()) : ceiling;
}
