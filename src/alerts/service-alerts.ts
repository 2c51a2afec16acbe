import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import type { ClaimedEvent } from '../db/inbox-queue.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import { Alerter, type AlerterOptions } from './alerter.js';
import { createMonitor, type MonitorDeps } from './monitor.js';

/** How long stop() waits for alerts already coalesced to go out. */
const STOP_DELIVERY_MS = 2000;

/** The alert hooks `hookrun start` hands to the worker and the cron runner, and the monitor beside them. */
export interface ServiceAlerts {
  onDead(event: ClaimedEvent, error: string): void;
  onRunFailed(run: { job: string; trigger: string; error: string; runId: number }): void;
  /** The change capture's slot holds back too much WAL (capture/capture.ts decides when). */
  onWalRetained(line: string): void;
  /** Begin watching the queue and the schedules: every 30 s, or only on `check()` when `timer` is false (inside a serverless function). */
  start(deps: { db: Database; clock: Clock; overdue: MonitorDeps['overdue'] }, options?: { timer?: boolean }): void;
  /** One monitor pass now (tests; the monitor's timer does it every 30 s). */
  check(): Promise<void>;
  stop(): Promise<void>;
}

/** Wire ALERT_WEBHOOK_URL into a running hookrun; without it every hook does nothing. */
export function createServiceAlerts(config: Pick<Config, 'alerts'>, log: Logger, metrics: Metrics, tuning: Partial<AlerterOptions> = {}): ServiceAlerts {
  const settings = config.alerts;
  if (!settings) return { onDead() {}, onRunFailed() {}, onWalRetained() {}, start() {}, check: async () => undefined, stop: async () => undefined };
  const alerter = new Alerter({ url: settings.webhookUrl, log, metrics, ...tuning });
  let monitor: ReturnType<typeof createMonitor> | undefined;
  return {
    onDead: (event, error) => alerter.notify('event_dead', `${event.source} ${event.type} #${event.id} (key ${event.key}): ${error}`),
    onRunFailed: (run) => alerter.notify('job_failed', `${run.job} (run #${run.runId}, ${run.trigger}): ${run.error}`),
    onWalRetained: (line) => alerter.notify('wal_retained', line),
    start(deps, options = {}) {
      monitor = createMonitor({ ...deps, log, alerts: alerter, settings });
      if (options.timer !== false) monitor.start();
    },
    check: async () => monitor?.check(),
    async stop() {
      await monitor?.stop();
      await alerter.stop(STOP_DELIVERY_MS);
    },
  };
}
