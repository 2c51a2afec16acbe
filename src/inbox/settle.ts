import type { ClaimedEvent, Settlement } from '../db/inbox-queue.js';
import { messageOf } from '../errors.js';
import { MalformedPayloadError } from './handlers/registry.js';
import { computeBackoffMs, hasAttemptsLeft, type RetryPolicy } from './retry.js';

/** The longest `last_error` kept: enough for a stack-less message, bounded for the row. */
export const MAX_ERROR_CHARS = 2000;

/**
 * The outcome of a claim decided before any handler runs: no handler for its
 * (source, type) → `ignored`; claimed more often than the policy allows (its
 * worker crashed or stopped each time) → `dead`; else undefined (run it).
 */
export function settleWithoutHandler(event: ClaimedEvent, hasHandler: boolean, policy: Pick<RetryPolicy, 'maxAttempts'>): Settlement | undefined {
  const base = { id: event.id, attempts: event.attempts };
  if (!hasHandler) return { ...base, status: 'ignored' };
  if (event.attempts > policy.maxAttempts) {
    return {
      ...base,
      status: 'dead',
      error: `Claimed ${event.attempts} times without finishing (the worker crashed or stopped each time). Fix the cause, then replay it.`,
    };
  }
  return undefined;
}

/**
 * The outcome of a handler that threw: a malformed payload is `dead` at once
 * (retrying cannot help); out of attempts is `dead`; otherwise `failed`, due
 * again after the shared backoff with jitter.
 */
export function settleFailure(event: ClaimedEvent, error: unknown, policy: RetryPolicy, nowMs: number, random: () => number): Settlement {
  const base = { id: event.id, attempts: event.attempts };
  const message = messageOf(error).slice(0, MAX_ERROR_CHARS);
  // By name too: a project's copy of hookrun (its import of 'hookrun') may not be the engine's module.
  if (error instanceof MalformedPayloadError || (error as Error | undefined)?.name === 'MalformedPayloadError')
    return { ...base, status: 'dead', error: message };
  if (!hasAttemptsLeft(event.attempts, policy)) return { ...base, status: 'dead', error: `${message} (gave up after ${event.attempts} attempts)` };
  return { ...base, status: 'failed', error: message, nextAttemptAt: new Date(nowMs + computeBackoffMs(event.attempts, policy, random)) };
}
