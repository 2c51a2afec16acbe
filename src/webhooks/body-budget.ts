/**
 * The bytes of webhook bodies being read or held at once, across all
 * receivers of one process. Past the cap a new upload is answered 503 at
 * once (the provider retries) instead of being buffered: with it, thousands
 * of stalled 1 MiB uploads cannot take the process's memory (security review:
 * 6,000 took RSS to 5.1 GB and /health stopped answering).
 */
export class BodyBudget {
  private used = 0;

  constructor(readonly maxBytes: number) {}

  /** Take `bytes` from the budget; false (and nothing taken) when they do not fit. */
  tryReserve(bytes: number): boolean {
    if (this.used + bytes > this.maxBytes) return false;
    this.used += bytes;
    return true;
  }

  /** Give back what a request took, when it is answered. */
  release(bytes: number): void {
    this.used = Math.max(0, this.used - bytes);
  }

  /** Bytes taken now (metrics, tests). */
  get inUse(): number {
    return this.used;
  }
}
