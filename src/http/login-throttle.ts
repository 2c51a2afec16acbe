/** Wrong tokens one client may try per window before the dashboard answers 429. */
export const MAX_LOGIN_FAILURES = 10;
/** The window, and how long a blocked client waits at most. */
export const LOGIN_WINDOW_MS = 60_000;
/** Clients remembered at once; the oldest is forgotten first (a flood of addresses cannot grow memory). */
const MAX_CLIENTS = 10_000;

/**
 * Per-client throttle of dashboard logins: after 10 wrong tokens in a minute
 * the client waits until the oldest of them is a minute old. Without it the
 * login took ~1,100 guesses a second. In memory, per instance: each instance
 * of N throttles on its own, which still bounds guessing to N × 10 a minute.
 */
export class LoginThrottle {
  private readonly failures = new Map<string, number[]>();

  /** Milliseconds until `client` may try again, or 0 when it may now. */
  retryAfterMs(client: string, nowMs: number): number {
    const recent = this.recent(client, nowMs);
    return recent.length >= MAX_LOGIN_FAILURES ? recent[0]! + LOGIN_WINDOW_MS - nowMs : 0;
  }

  /** Count a wrong token. */
  fail(client: string, nowMs: number): void {
    const recent = this.recent(client, nowMs);
    recent.push(nowMs);
    this.failures.delete(client); // re-insert: the map's order is the eviction order
    this.failures.set(client, recent.slice(-MAX_LOGIN_FAILURES));
    if (this.failures.size > MAX_CLIENTS) this.failures.delete(this.failures.keys().next().value!);
  }

  /** A correct token clears the client's record. */
  succeed(client: string): void {
    this.failures.delete(client);
  }

  private recent(client: string, nowMs: number): number[] {
    return (this.failures.get(client) ?? []).filter((at) => nowMs - at < LOGIN_WINDOW_MS);
  }
}
