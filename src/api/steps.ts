import type { EventName, EventOf } from './event-types.js';

/**
 * A step's own retry policy: it runs at most `attempts` times (then its
 * delivery is dead with the step's error), waiting `backoff` before its
 * second run and twice as long before each next one. Without it a failed
 * step is retried with its delivery's policy (MAX_ATTEMPTS, the shared backoff).
 */
export interface StepOptions {
  attempts?: number;
  /** Milliseconds or a duration: '500ms', '30s', '5m', '1h'. */
  backoff?: string | number;
}

/** What `ctx.waitForEvent` waits for: an event named `on` whose value at `match` equals the current event's, for up to `timeout`. */
export interface WaitForEventOptions<W extends EventName> {
  /** A `<provider>:<type>` name, as in `on`: `stripe:invoice.paid`. */
  on: W;
  /** A dotted path into both payloads, e.g. `data.object.customer`: the value the two events share. */
  match: string;
  /** How long to wait, at most a year: milliseconds or '30s', '1h', '1d'. */
  timeout: string | number;
}

/**
 * Durable steps of a delivery: each step's result is stored in hookrun's
 * database when it ends, so a retry, a replay or a resume after a crash or a
 * sleep returns it instead of running the step again, and goes on at the
 * first step that has not succeeded. Call them in the same order on every
 * attempt, each id once; code outside steps runs again on every attempt.
 */
export interface DurableSteps {
  /**
   * Run `fn` once for this delivery and return its result, stored as JSON
   * (plain objects, arrays, strings, numbers, booleans, null; at most 256 KB).
   * A throw fails the delivery; its retry runs this step again, and not the
   * steps that succeeded before it.
   */
  step<T>(id: string, fn: () => T | Promise<T>, options?: StepOptions): Promise<Awaited<T>>;
  /** End this attempt and go on after `duration` ('30s', '1h', '1d', at most a year), holding nothing meanwhile. */
  sleep(id: string, duration: string | number): Promise<void>;
  /** End this attempt and go on at `at` (a Date or ISO 8601 text, at most a year ahead), holding nothing meanwhile. */
  sleepUntil(id: string, at: Date | string): Promise<void>;
  /**
   * End this attempt until an event named `on` arrives whose value at `match`
   * equals this event's (one that arrived within `timeout` before counts
   * too), and return it; null when `timeout` passes without one.
   */
  waitForEvent<W extends EventName>(id: string, options: WaitForEventOptions<W>): Promise<EventOf<W> | null>;
}
