import type { Context, MiddlewareHandler } from 'hono';
import type { Logger } from '../log.js';
import { errorResponse } from './errors.js';
import {
  blockMessage,
  FAILURE_WINDOW_MS,
  retryAfterSeconds,
  type CredentialBlock,
  type CredentialOutcome,
  type CredentialThrottle,
} from './credential-throttle.js';

/** Failure log lines per window over all routes and clients; the rest are counted and reported on the next line. */
export const MAX_FAILURE_LOG_LINES = 20;

/** What the guard needs: the caller's address, a clock, a log, the app's one throttle. */
export interface AuthFailureGuardDeps {
  log: Logger;
  now: () => number;
  /** The caller's IP (the socket's); undefined is counted as one client, "unknown". */
  clientAddress: (c: Context) => string | undefined;
  /** Shared by every guarded route and the console login, so a guess on one counts on all. */
  throttle: CredentialThrottle;
  /**
   * True for a bearer route (`/api`, `/cron`, `/metrics`): a blocked address
   * is refused before the route compares its credential. False for the
   * receivers: a sender's address is shared by all its accounts, so the
   * signature is always checked and only a wrong one is answered 429.
   */
  refuseBeforeCheck: boolean;
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
    if (nowMs - this.windowStart >= FAILURE_WINDOW_MS) {
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

/** The 429 of a blocked request: the same whatever credential it carries. */
function refuse(c: Context, block: CredentialBlock, checked: boolean): Response {
  const seconds = retryAfterSeconds(block);
  const res = errorResponse(c, 429, 'too_many_requests', blockMessage(block, checked));
  res.headers.set('retry-after', String(seconds));
  return res;
}

/** 401 is a wrong or missing credential; a 2xx or 3xx came after the route accepted it; anything else says nothing. */
function outcomeOf(status: number): CredentialOutcome {
  if (status === 401) return 'wrong';
  return status >= 200 && status < 400 ? 'right' : undefined;
}

/**
 * Middleware for every route a bearer or signature guards. On a bearer route
 * (`/api`, `/cron` with CRON_SECRET, `/metrics` with METRICS_TOKEN) a blocked
 * address is answered 429 `too_many_requests` with `Retry-After` before the
 * route sees the request, so the right credential gets the same 429 as a
 * wrong one and a guesser learns nothing until the block ends
 * (credential-throttle.ts says when it starts and how it grows). On a
 * receiver, and for a request without an address, the credential is checked
 * first and only a wrong one past the limit becomes 429. Compared failures are logged, at most 20 lines a minute; a line
 * never holds a credential.
 */
export function createAuthFailureGuard(deps: AuthFailureGuardDeps): MiddlewareHandler {
  const { throttle } = deps;
  const failures = new FailureLog(deps.log);
  const logFailure = (c: Context, client: string | undefined, now: number) => {
    const block = throttle.blockFor(client, now);
    const blocked = block && { blocked: block.scope, retry_after_seconds: retryAfterSeconds(block) };
    failures.record(now, { client: client ?? 'unknown', method: c.req.method, path: c.req.path, ...blocked });
  };
  /** A wrong credential checked first: counted, and answered 429 when a block already held. */
  const countChecked = (c: Context, client: string | undefined, block: CredentialBlock | undefined) => {
    logFailure(c, client, deps.now());
    if (!block) return;
    c.res = undefined; // a fresh answer: keep none of the 401's headers
    c.res = refuse(c, block, true);
  };
  if (!deps.refuseBeforeCheck) {
    return async (c, next) => {
      await next();
      if (c.res.status !== 401) return;
      const client = deps.clientAddress(c);
      const now = deps.now();
      const block = throttle.blockFor(client, now);
      throttle.fail(client, now);
      countChecked(c, client, block);
    };
  }
  return async (c, next) => {
    const client = deps.clientAddress(c);
    const block = await throttle.admit(client, deps.now);
    if (block) return refuse(c, block, false);
    let outcome: CredentialOutcome;
    let heldBlock: CredentialBlock | undefined;
    try {
      await next();
      outcome = outcomeOf(c.res.status);
    } finally {
      heldBlock = throttle.settle(client, deps.now(), outcome);
    }
    if (outcome === 'wrong') countChecked(c, client, heldBlock);
  };
}
