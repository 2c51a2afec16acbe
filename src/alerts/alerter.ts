import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { alertHeading, postAlert, AlertDeliveryError } from './deliver.js';

/** What an alert is about; each kind is coalesced and rate-limited on its own. */
export type AlertKind = 'issue' | 'event_dead' | 'job_failed' | 'tick_late' | 'job_stopped' | 'backlog' | 'wal_retained';

/** Where other capabilities report what is worth an alert; a no-op when ALERT_WEBHOOK_URL is unset. */
export interface AlertSink {
  /** Never blocks and never throws: the line is coalesced and sent later. */
  notify(kind: AlertKind, line: string): void;
}

/** Tuning; the defaults are what production wants, tests shrink the times. */
export interface AlerterOptions {
  url: URL;
  log: Logger;
  metrics?: Metrics;
  /** At most one message per kind in this window; later lines wait and go out together, counted. Default 60 s. */
  windowMs?: number;
  /** Waits between attempts of one message. Default 2 s, 10 s, 30 s (4 attempts). */
  retryDelaysMs?: readonly number[];
  /** Per attempt. Default 5 s. */
  timeoutMs?: number;
  /** Messages waiting to be delivered; past it the newest is dropped and counted. Default 100. */
  maxQueued?: number;
}

const TITLES: Record<AlertKind, (n: number) => string> = {
  issue: (n) => `${n} issue${n === 1 ? '' : 's'} opened (told once per opening; acknowledge or resolve in /admin/issues)`,
  event_dead: (n) => `${n} event${n === 1 ? '' : 's'} went dead (out of attempts or malformed); fix the cause, then \`hookrun events replay --status dead\``,
  job_failed: (n) => `${n} cron run${n === 1 ? '' : 's'} failed`,
  tick_late: (n) => `${n} cron tick${n === 1 ? ' has' : 's have'} not started on time (is a scheduler running?)`,
  job_stopped: (n) => `${n} cron job${n === 1 ? ' has' : 's have'} not run for twice ${n === 1 ? 'its' : 'their'} interval`,
  backlog: () => 'events are waiting to be processed longer than ALERT_BACKLOG_SECONDS (is a worker running?)',
  wal_retained: () => 'the changes slot makes the product database keep more WAL than CHANGES_MAX_RETAINED_WAL_MB (its disk fills while this lasts)',
};
const SAMPLE_LINES = 5;
const MAX_LINE_CHARS = 300;

interface KindState {
  lastSentAt: number;
  count: number;
  lines: string[];
  timer?: NodeJS.Timeout;
}

/**
 * Sends alerts to `ALERT_WEBHOOK_URL` without ever holding up the caller:
 * lines are coalesced per kind (one message per kind per window, with the
 * count and the first few lines), queued, and delivered one at a time with
 * retries. A receiver that is down costs a log line, never an event or a run.
 */
export class Alerter implements AlertSink {
  private readonly kinds = new Map<AlertKind, KindState>();
  private readonly queue: Array<{ kind: AlertKind | 'test'; text: string }> = [];
  private pumping: Promise<void> | undefined;
  private stopped = false;
  private readonly stopController = new AbortController();
  private readonly windowMs: number;
  private readonly retryDelaysMs: readonly number[];
  private readonly timeoutMs: number;
  private readonly maxQueued: number;

  constructor(private readonly options: AlerterOptions) {
    this.windowMs = options.windowMs ?? 60_000;
    this.retryDelaysMs = options.retryDelaysMs ?? [2000, 10_000, 30_000];
    this.timeoutMs = options.timeoutMs ?? 5000;
    this.maxQueued = options.maxQueued ?? 100;
  }

  notify(kind: AlertKind, line: string): void {
    if (this.stopped) return;
    const state = this.kinds.get(kind) ?? { lastSentAt: Number.NEGATIVE_INFINITY, count: 0, lines: [] };
    this.kinds.set(kind, state);
    state.count += 1;
    if (state.lines.length < SAMPLE_LINES) state.lines.push(line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}…` : line);
    const wait = state.lastSentAt + this.windowMs - Date.now();
    if (wait <= 0) this.emit(kind, state);
    else state.timer ??= setTimeout(() => this.emit(kind, state), wait).unref();
  }

  /** Send what is coalesced now, then wait (up to `timeoutMs`) for the queue to drain; what is left is dropped. */
  async stop(timeoutMs: number): Promise<void> {
    for (const [kind, state] of this.kinds) if (state.count > 0) this.emit(kind, state);
    this.stopped = true;
    const drained = this.pumping ?? Promise.resolve();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([drained, new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    clearTimeout(timer);
    this.stopController.abort();
  }

  private emit(kind: AlertKind, state: KindState): void {
    clearTimeout(state.timer);
    state.timer = undefined;
    if (state.count === 0) return;
    const more = state.count - state.lines.length;
    const text = alertHeading([TITLES[kind](state.count), ...state.lines.map((l) => `• ${l}`), ...(more > 0 ? [`… and ${more} more`] : [])].join('\n'));
    state.lastSentAt = Date.now();
    state.count = 0;
    state.lines = [];
    if (this.queue.length >= this.maxQueued) {
      this.options.metrics?.alerts.inc({ kind, outcome: 'dropped' });
      this.options.log.warn({ kind }, 'alert dropped: too many alerts waiting to be delivered');
      return;
    }
    this.queue.push({ kind, text });
    this.pumping ??= this.pump().finally(() => (this.pumping = undefined));
  }

  private async pump(): Promise<void> {
    for (let message = this.queue.shift(); message && !this.stopController.signal.aborted; message = this.queue.shift()) {
      const outcome = await this.deliver(message.text);
      this.options.metrics?.alerts.inc({ kind: message.kind, outcome });
    }
  }

  private async deliver(text: string): Promise<'sent' | 'failed'> {
    for (let attempt = 0; ; attempt += 1) {
      try {
        await postAlert(this.options.url, text, this.timeoutMs);
        return 'sent';
      } catch (error) {
        const delay = this.retryDelaysMs[attempt];
        const permanent = error instanceof AlertDeliveryError && error.permanent;
        if (permanent || delay === undefined || this.stopController.signal.aborted) {
          this.options.log.warn({ err: { message: (error as Error).message }, attempts: attempt + 1 }, 'alert not delivered');
          return 'failed';
        }
        await sleep(delay, undefined, { signal: this.stopController.signal }).catch(() => undefined); // stop() cuts the wait short
      }
    }
  }
}
