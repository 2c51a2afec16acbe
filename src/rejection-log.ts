import type { Logger } from './log.js';
import type { Metrics } from './metrics.js';

/** Lines logged per route and reason in one window; past them, one summary line at the window's end. */
export const REJECTIONS_LOGGED_PER_WINDOW = 10;
const WINDOW_MS = 60_000;

interface Window {
  startedAt: number;
  logged: number;
  suppressed: number;
}

/**
 * Refused requests (bad signature, wrong token, over a limit): every one is
 * counted in `hookrun_requests_rejected_total{route, reason}`, but only the
 * first few per route and reason each minute are logged, then one line with
 * how many were not. A flood of junk costs a counter increment, not a log
 * line each (a review saw 19,000 requests write 4.2 MB of logs in 5 s).
 */
export class RejectionLog {
  private readonly windows = new Map<string, Window>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly log: Logger,
    private readonly metrics: Metrics,
    private readonly now: () => number = Date.now,
    private readonly options: { perWindow?: number; windowMs?: number } = {},
  ) {}

  /**
   * One refused request. `route` and `reason` must come from a bounded set
   * (a route pattern, an error code), never from the request; `fields` must
   * hold no secret.
   */
  rejected(route: string, reason: string, fields: Record<string, unknown>, message: string): void {
    this.metrics.requestsRejected.inc({ route, reason });
    const key = `${route}\u0000${reason}`;
    const now = this.now();
    const windowMs = this.options.windowMs ?? WINDOW_MS;
    let window = this.windows.get(key);
    if (window && now - window.startedAt >= windowMs) {
      this.summarize(key, window);
      window = undefined;
    }
    if (!window) {
      window = { startedAt: now, logged: 0, suppressed: 0 };
      this.windows.set(key, window);
    }
    if (window.logged < (this.options.perWindow ?? REJECTIONS_LOGGED_PER_WINDOW)) {
      window.logged++;
      this.log.info({ route, reason, ...fields }, message);
      return;
    }
    window.suppressed++;
    this.timer ??= setTimeout(() => this.flush(), windowMs).unref();
  }

  /** Count a refusal without logging it (one the caller logs its own way, e.g. 503s). */
  counted(route: string, reason: string): void {
    this.metrics.requestsRejected.inc({ route, reason });
  }

  /** Write the summary of every window that has ended (or all, with `all`). */
  flush(all = false): void {
    this.timer = undefined;
    const now = this.now();
    const windowMs = this.options.windowMs ?? WINDOW_MS;
    let pending = false;
    for (const [key, window] of this.windows) {
      if (all || now - window.startedAt >= windowMs) this.summarize(key, window);
      else pending ||= window.suppressed > 0;
    }
    if (pending) this.timer = setTimeout(() => this.flush(), windowMs).unref();
  }

  private summarize(key: string, window: Window): void {
    this.windows.delete(key);
    if (window.suppressed === 0) return;
    const [route, reason] = key.split('\u0000');
    this.log.info(
      { route, reason, suppressed: window.suppressed, windowSeconds: Math.round((this.now() - window.startedAt) / 1000) },
      `${window.suppressed} more rejected requests not logged (see hookrun_requests_rejected_total)`,
    );
  }
}
