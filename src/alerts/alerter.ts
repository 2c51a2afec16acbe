import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import { alertHeading } from './deliver.js';
import { DeliveryQueue, type DeliveryTuning } from './delivery-queue.js';
import type { Alert, AlertKind } from './alert.js';
import type { AlertDestination } from './destination.js';

export type { AlertKind };

/** What a notification may add to its line: the key its resolve will name, and how bad it is. */
export interface NotifyOptions {
  /** Stable for the condition (PagerDuty's `dedup_key`); default `hookrun-<kind>`. */
  key?: string;
  severity?: Alert['severity'];
}

/** Where other capabilities report what is worth an alert; a no-op when no destination is set. */
export interface AlertSink {
  /** Never blocks and never throws: the line is coalesced for chat and queued for incident tools. */
  notify(kind: AlertKind, line: string, options?: NotifyOptions): void;
  /** The condition of `key` cleared: incident tools resolve it, chat is told in a line. Never blocks. */
  resolve(kind: AlertKind, key: string, line: string): void;
}

/** Tuning; the defaults are what production wants, tests shrink the times. */
export interface AlerterOptions extends DeliveryTuning {
  destinations: readonly AlertDestination[];
  log: Logger;
  metrics?: Metrics;
  /** At most one chat message per kind in this window; later lines wait and go out together, counted. Default 60 s. */
  windowMs?: number;
}

type ChatKind = AlertKind | 'resolved';

const plural = (n: number, one: string, many: string) => (n === 1 ? one : many);
const TITLES: Record<ChatKind, (n: number) => string> = {
  issue: (n) => `${n} ${plural(n, 'issue', 'issues')} opened (told once per opening; acknowledge or resolve in /admin/issues)`,
  event_dead: (n) =>
    `${n} ${plural(n, 'event', 'events')} went dead (out of attempts or malformed); fix the cause, then \`hookrun events replay --status dead\``,
  job_failed: (n) => `${n} cron ${plural(n, 'run', 'runs')} failed`,
  tick_late: (n) => `${n} cron ${plural(n, 'tick has', 'ticks have')} not started on time (is a scheduler running?)`,
  job_stopped: (n) => `${n} cron ${plural(n, 'job has', 'jobs have')} not run for twice ${plural(n, 'its', 'their')} interval`,
  backlog: () => 'events are waiting to be processed longer than ALERT_BACKLOG_SECONDS (is a worker running?)',
  wal_retained: () => 'the changes slot makes the product database keep more WAL than CHANGES_MAX_RETAINED_WAL_MB (its disk fills while this lasts)',
  resolved: (n) => `${n} ${plural(n, 'condition', 'conditions')} cleared`,
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
 * Sends alerts to every configured destination without ever holding up the
 * caller. Chat (Slack) gets lines coalesced per kind (one message per kind per
 * window, with the count and the first few lines); incident tools (PagerDuty,
 * the signed webhook) get each trigger and resolve on its own, under its key.
 * Each destination has its own queue, delivered one at a time with retries.
 */
export class Alerter implements AlertSink {
  private readonly kinds = new Map<ChatKind, KindState>();
  private readonly queues: Array<{ destination: AlertDestination; queue: DeliveryQueue }>;
  private stopped = false;
  private readonly windowMs: number;

  constructor(options: AlerterOptions) {
    this.windowMs = options.windowMs ?? 60_000;
    this.queues = options.destinations.map((destination) => ({
      destination,
      queue: new DeliveryQueue(destination.name, { log: options.log, metrics: options.metrics }, options),
    }));
  }

  notify(kind: AlertKind, line: string, options: NotifyOptions = {}): void {
    if (this.stopped) return;
    this.chat(kind, line);
    this.send({ action: 'trigger', kind, key: options.key ?? `hookrun-${kind}`, summary: line, severity: options.severity ?? 'error', at: new Date() });
  }

  resolve(kind: AlertKind, key: string, line: string): void {
    if (this.stopped) return;
    this.chat('resolved', line);
    this.send({ action: 'resolve', kind, key, summary: line, severity: 'info', at: new Date() });
  }

  /** Send what is coalesced now, then wait (up to `timeoutMs`) for the queues to drain; what is left is dropped. */
  async stop(timeoutMs: number): Promise<void> {
    for (const [kind, state] of this.kinds) if (state.count > 0) this.emit(kind, state);
    this.stopped = true;
    await Promise.all(this.queues.map(({ queue }) => queue.stop(timeoutMs)));
  }

  private send(alert: Alert): void {
    for (const { destination, queue } of this.queues) if (destination.takes === 'alert') queue.push(alert.kind, destination.request(alert));
  }

  private chat(kind: ChatKind, line: string): void {
    if (!this.queues.some(({ destination }) => destination.takes === 'text')) return;
    const state = this.kinds.get(kind) ?? { lastSentAt: Number.NEGATIVE_INFINITY, count: 0, lines: [] };
    this.kinds.set(kind, state);
    state.count += 1;
    if (state.lines.length < SAMPLE_LINES) state.lines.push(line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}…` : line);
    const wait = state.lastSentAt + this.windowMs - Date.now();
    if (wait <= 0) this.emit(kind, state);
    else state.timer ??= setTimeout(() => this.emit(kind, state), wait).unref();
  }

  private emit(kind: ChatKind, state: KindState): void {
    clearTimeout(state.timer);
    state.timer = undefined;
    if (state.count === 0) return;
    const more = state.count - state.lines.length;
    const text = alertHeading([TITLES[kind](state.count), ...state.lines.map((l) => `• ${l}`), ...(more > 0 ? [`… and ${more} more`] : [])].join('\n'));
    state.lastSentAt = Date.now();
    state.count = 0;
    state.lines = [];
    for (const { destination, queue } of this.queues) if (destination.takes === 'text') queue.push(kind, destination.request(text));
  }
}
