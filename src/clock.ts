/**
 * Time as a dependency. The scheduler, the verifiers and the worker take a
 * `Clock` so tests move time instead of sleeping (graphile-worker's fake-time
 * cron tests are the model).
 */
export interface Clock {
  /** Current time in milliseconds since the epoch. */
  now(): number;
}

/** The real wall clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** A clock tests can set and advance by hand. */
export class ManualClock implements Clock {
  constructor(private current: number = Date.UTC(2026, 0, 1)) {}
  now(): number {
    return this.current;
  }
  set(ms: number): void {
    this.current = ms;
  }
  advance(ms: number): void {
    this.current += ms;
  }
}
