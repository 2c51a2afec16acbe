/**
 * A loop's sleep that a wake ends at once: the inbox worker and the flow
 * claimer sleep until the next due time and are woken by new work. A wake
 * while the loop is busy is kept, so its next sleep returns at once.
 */
export class WakeableSleep {
  private pending = false;
  private sleeper: { timer: NodeJS.Timeout; resolve: () => void } | undefined;

  /** The loop is about to look for work: forget the wakes before now. */
  clear(): void {
    this.pending = false;
  }

  /** Sleep `ms`, or less if woken (at once if woken since the last `clear`). */
  sleep(ms: number): Promise<void> {
    if (this.pending) return Promise.resolve();
    return new Promise((resolve) => {
      this.sleeper = { resolve, timer: setTimeout(() => ((this.sleeper = undefined), resolve()), ms) };
    });
  }

  /** End the current sleep, or the next one. Cheap; call freely. */
  wake(): void {
    this.pending = true;
    if (!this.sleeper) return;
    clearTimeout(this.sleeper.timer);
    const { resolve } = this.sleeper;
    this.sleeper = undefined;
    resolve();
  }
}
