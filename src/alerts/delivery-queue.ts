import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import { AlertDeliveryError, sendAlertRequest, type AlertRequest } from './deliver.js';

/** How a queue delivers; the defaults are what production wants, tests shrink the times. */
export interface DeliveryTuning {
  /** Waits between attempts of one message. Default 2 s, 10 s, 30 s (4 attempts). */
  retryDelaysMs?: readonly number[];
  /** Per attempt. Default 5 s. */
  timeoutMs?: number;
  /** Messages waiting to be delivered; past it the newest is dropped and counted. Default 100. */
  maxQueued?: number;
}

/**
 * One destination's messages, delivered one at a time with retries, in the
 * order queued: a destination that is down delays only its own messages, and
 * costs a log line, never an event or a run.
 */
export class DeliveryQueue {
  private readonly queue: Array<{ kind: string; request: AlertRequest }> = [];
  private pumping: Promise<void> | undefined;
  private readonly stopController = new AbortController();
  private readonly retryDelaysMs: readonly number[];
  private readonly timeoutMs: number;
  private readonly maxQueued: number;

  constructor(
    private readonly destination: string,
    private readonly deps: { log: Logger; metrics?: Metrics },
    tuning: DeliveryTuning,
  ) {
    this.retryDelaysMs = tuning.retryDelaysMs ?? [2000, 10_000, 30_000];
    this.timeoutMs = tuning.timeoutMs ?? 5000;
    this.maxQueued = tuning.maxQueued ?? 100;
  }

  /** Queue one message (`kind` labels its metric); dropped and counted when the queue is full. */
  push(kind: string, request: AlertRequest): void {
    if (this.stopController.signal.aborted) return;
    if (this.queue.length >= this.maxQueued) {
      this.count(kind, 'dropped');
      this.deps.log.warn({ kind, destination: this.destination }, 'alert dropped: too many alerts waiting to be delivered');
      return;
    }
    this.queue.push({ kind, request });
    this.pumping ??= this.pump().finally(() => (this.pumping = undefined));
  }

  /** Wait (up to `timeoutMs`) for what is queued to go out; then abort what is left. */
  async stop(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.pumping ?? Promise.resolve(), new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    clearTimeout(timer);
    this.stopController.abort();
  }

  private count(kind: string, outcome: 'sent' | 'failed' | 'dropped'): void {
    this.deps.metrics?.alerts.inc({ kind, outcome, destination: this.destination });
  }

  private async pump(): Promise<void> {
    for (let message = this.queue.shift(); message && !this.stopController.signal.aborted; message = this.queue.shift()) {
      this.count(message.kind, await this.deliver(message.request));
    }
  }

  private async deliver(request: AlertRequest): Promise<'sent' | 'failed'> {
    for (let attempt = 0; ; attempt += 1) {
      try {
        await sendAlertRequest(request, this.timeoutMs);
        return 'sent';
      } catch (error) {
        const delay = this.retryDelaysMs[attempt];
        const permanent = error instanceof AlertDeliveryError && error.permanent;
        if (permanent || delay === undefined || this.stopController.signal.aborted) {
          this.deps.log.warn({ err: { message: (error as Error).message }, attempts: attempt + 1, destination: this.destination }, 'alert not delivered');
          return 'failed';
        }
        await sleep(delay, undefined, { signal: this.stopController.signal }).catch(() => undefined); // stop() cuts the wait short
      }
    }
  }
}
