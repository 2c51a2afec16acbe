/** Wrong credentials one client may send per window before it is answered 429. */
export const MAX_LOGIN_FAILURES = 10;
/** Wrong credentials from all clients together per window before every wrong one is answered 429. */
export const MAX_GLOBAL_FAILURES = 100;
/** The window, and how long a blocked client waits at most. */
export const LOGIN_WINDOW_MS = 60_000;
/** Clients remembered at once; the oldest is forgotten first (a flood of addresses cannot grow memory). */
const MAX_CLIENTS = 10_000;

/**
 * Counts wrong credentials per client and over all clients: past 10 from one
 * client, or 100 from everyone, in a minute, a wrong credential is answered
 * 429 until the oldest counted failure is a minute old. Callers compare the
 * credential first and count only failures, so a correct one is never locked
 * out (behind a proxy every client shares the proxy's address). In memory,
 * per instance.
 */
export class LoginThrottle {
  private readonly failures = new Map<string, number[]>();
  private readonly everyone: number[] = [];

  constructor(
    private readonly perClient = MAX_LOGIN_FAILURES,
    private readonly global = MAX_GLOBAL_FAILURES,
  ) {}

  /** Milliseconds until `client` may be answered 401 again rather than 429, or 0 when it may now. */
  retryAfterMs(client: string, nowMs: number): number {
    const recent = this.recent(client, nowMs);
    const own = recent.length >= this.perClient ? recent[0]! + LOGIN_WINDOW_MS - nowMs : 0;
    while (this.everyone.length > 0 && nowMs - this.everyone[0]! >= LOGIN_WINDOW_MS) this.everyone.shift();
    const all = this.everyone.length >= this.global ? this.everyone[0]! + LOGIN_WINDOW_MS - nowMs : 0;
    return Math.max(own, all);
  }

  /** Count a wrong credential. */
  fail(client: string, nowMs: number): void {
    const recent = this.recent(client, nowMs);
    recent.push(nowMs);
    this.failures.delete(client); // re-insert: the map's order is the eviction order
    this.failures.set(client, recent.slice(-this.perClient));
    if (this.failures.size > MAX_CLIENTS) this.failures.delete(this.failures.keys().next().value!);
    this.everyone.push(nowMs);
    if (this.everyone.length > this.global) this.everyone.shift();
  }

  /** A correct credential clears the client's record. */
  succeed(client: string): void {
    this.failures.delete(client);
  }

  private recent(client: string, nowMs: number): number[] {
    return (this.failures.get(client) ?? []).filter((at) => nowMs - at < LOGIN_WINDOW_MS);
  }
}
