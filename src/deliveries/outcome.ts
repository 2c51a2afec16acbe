import { messageOf } from '../errors.js';
import { MalformedPayloadError } from '../api/malformed-payload.js';
import type { ClaimedDelivery, DeliveryOutcome } from './claimed.js';
import { MAX_ERROR_CHARS } from './event-summary.js';
import { computeBackoffMs, hasAttemptsLeft, type RetryPolicy } from './retry.js';
import { stackOf } from './stack.js';
import { DeliverySuspended, StepError } from '../steps/step-signals.js';

export { MAX_ERROR_CHARS };

/** When an attempt ran: its start (ms epoch, the clock) and its duration. */
export interface AttemptTiming {
  startedAt: number;
  durationMs: number;
}

/**
 * A delivery claimed more often than the policy allows (its worker crashed or
 * stopped each time) ends without running again; undefined otherwise.
 */
export function settleOverClaimed(
  delivery: ClaimedDelivery,
  policy: Pick<RetryPolicy, 'maxAttempts'>,
  ordered: boolean,
  at: number,
): DeliveryOutcome | undefined {
  if (delivery.attempts <= policy.maxAttempts) return undefined;
  return {
    ...base(delivery, { startedAt: at, durationMs: 0 }, ordered ? 'parked' : 'dead'),
    error: `Claimed ${delivery.attempts} times without finishing (the worker crashed or stopped each time). Fix the cause, then replay it.`,
  };
}

/** A delivery whose handler returned. */
export function settleProcessed(delivery: ClaimedDelivery, timing: AttemptTiming): DeliveryOutcome {
  return base(delivery, timing, 'processed');
}

/**
 * The outcome of a handler that threw: a sleep or a wait is pending until its
 * time (not a failure); a malformed payload or a step that cannot go on is
 * dead at once (retrying cannot help); out of attempts is dead (parked for an
 * ordered delivery: its key's later deliveries go on); otherwise failed, due
 * again after the shared backoff with jitter (a step's own backoff when it
 * has one). The message and the stack are kept.
 */
export function settleFailure(
  delivery: ClaimedDelivery,
  error: unknown,
  o: { policy: RetryPolicy; now: number; random: () => number; ordered: boolean; timing: AttemptTiming },
): DeliveryOutcome {
  if (error instanceof DeliverySuspended) return { ...base(delivery, o.timing, 'pending'), runAfter: error.until };
  const failed = {
    ...base(delivery, o.timing, 'failed'),
    error: messageOf(error).slice(0, MAX_ERROR_CHARS) || 'failed without a message',
    stack: stackOf(error),
  };
  const terminal = o.ordered ? 'parked' : 'dead';
  // By name too: a project's copy of hookrun (its import of 'hookrun') may not be the engine's module.
  if (error instanceof MalformedPayloadError || (error as Error | undefined)?.name === 'MalformedPayloadError') return { ...failed, status: terminal };
  if (error instanceof StepError && error.terminal) return { ...failed, status: terminal };
  if (!hasAttemptsLeft(delivery.attempts, o.policy))
    return { ...failed, status: terminal, error: `${failed.error} (gave up after ${delivery.attempts} attempts)`.slice(0, MAX_ERROR_CHARS) };
  const backoff = error instanceof StepError && error.backoffMs !== undefined ? { ...o.policy, baseDelayMs: error.backoffMs } : o.policy;
  return { ...failed, runAfter: o.now + computeBackoffMs(delivery.attempts, backoff, o.random) };
}

/**
 * An outcome's own fields, `status` among them: adding a property to an object spread costs Node 20 about
 * 2 µs, which a delivery processed would pay on every settle.
 */
const base = (delivery: ClaimedDelivery, timing: AttemptTiming, status: DeliveryOutcome['status']): DeliveryOutcome => ({
  id: delivery.id,
  eventId: delivery.event.id,
  attempts: delivery.attempts,
  status,
  startedAt: timing.startedAt,
  durationMs: timing.durationMs,
});
