import type { Context, MiddlewareHandler } from 'hono';
import type { Logger } from '../log.js';
import { errorResponse } from './errors.js';
import { LOGIN_WINDOW_MS, LoginThrottle } from './login-throttle.js';

/** Failure log lines per window over all routes and clients; the rest are counted and reported on the next line. */
export const MAX_FAILURE_LOG_LINES = 20;

/** What the guard needs: the caller's address, a clock, a log. */
export interface AuthFailureGuardDeps {
  log: Logger;
  now: () => number;
  /** The caller's IP (the socket's); undefined is counted as one client, "unknown". */
  clientAddress: (c: Context) => string | undefined;
  /** Default: 10 per client, 100 overall, per minute. */
  throttle?: LoginThrottle;
}

/**
 * Logs authentication failures without flooding the log: at most 20 lines a
 * minute, the next line says how many were left out. It never sees a
 * credential (only the route, the address and the count).
 */
class FailureLog {
  private windowStart = -Infinity;
  private lines = 0;
  private suppressed = 0;

  constructor(private readonly log: Logger) {}

  record(nowMs: number, fields: Record<string, unknown>): void {
    if (nowMs - this.windowStart >= LOGIN_WINDOW_MS) {
      this.windowStart = nowMs;
      this.lines = 0;
    }
    if (this.lines >= MAX_FAILURE_LOG_LINES) {
      this.suppressed++;
      return;
    }
    this.lines++;
    const suppressed = this.suppressed;
    this.suppressed = 0;
    this.log.warn({ ...fields, ...(suppressed > 0 ? { suppressed } : {}) }, 'authentication failed: wrong or missing credential');
  }
}

/**
 * Middleware for every route a bearer or signature guards (`/api`, `/cron`,
 * `/metrics`, the receivers): the route checks the credential itself (in
 * constant time), so a correct one always gets through; each 401 it answers
 * is counted per caller address and overall, and past the limit the wrong
 * credential is answered 429 `too_many_requests` with `Retry-After` instead.
 * Guessing a 32-character secret stays hopeless either way; this bounds what
 * a flood of wrong ones costs the log and tells the caller to stop.
 */
export function createAuthFailureGuard(deps: AuthFailureGuardDeps): MiddlewareHandler {
  const throttle = deps.throttle ?? new LoginThrottle();
  const failures = new FailureLog(deps.log);
  return async (c, next) => {
    await next();
    if (c.res.status !== 401) return;
    const client = deps.clientAddress(c) ?? 'unknown';
    const now = deps.now();
    const waitMs = throttle.retryAfterMs(client, now);
    throttle.fail(client, now);
    failures.record(now, { client, method: c.req.method, path: c.req.path, throttled: waitMs > 0 });
    if (waitMs <= 0) return;
    const seconds = Math.max(1, Math.ceil(waitMs / 1000));
    c.res = undefined; // a fresh answer: keep none of the 401's headers
    c.res = errorResponse(
      c,
      429,
      'too_many_requests',
      `Too many wrong or missing credentials from your address or from everyone; retry in ${seconds} s with the right one (a correct credential is always accepted).`,
    );
    c.res.headers.set('retry-after', String(seconds));
  };
}
