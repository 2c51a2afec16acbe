import type { Clock } from '../clock.js';
import type { Config } from '../config/config.js';
import type { Database } from '../db/database.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import { Alerter, type AlerterOptions } from './alerter.js';
import { alertDestinations } from './destination.js';
import { createMonitor, type MonitorDeps } from './monitor.js';

/** How long stop() waits for alerts already coalesced to go out. */
const STOP_DELIVERY_MS = 2000;

/** The thresholds the monitor uses when no alert destination is set (issues are recorded all the same). */
const DEFAULT_THRESHOLDS = { lateTickSeconds: 300, backlogSeconds: 600 };

/**
 * The monitor `hookrun start` runs beside the worker and the cron runner
 * (it records issues, and tells the alert channel once per opening), and
 * the change capture's own alert hook.
 */
export interface ServiceAlerts {
  /** An event went dead: the monitor looks soon (the issue, not this event, is what is told). */
  onDead(): void;
  /** A cron run failed for good: the monitor looks soon. */
  onRunFailed(): void;
  /** The change capture's slot holds back too much WAL (capture/capture.ts decides when). */
  onWalRetained(line: string): void;
  /** Begin watching: every 30 s, or only on `check()` when `timer` is false (inside a serverless function). */
  start(deps: { db: Database; clock: Clock; overdue: MonitorDeps['overdue'] }, options?: { timer?: boolean }): void;
  /** One monitor pass now (tests; the monitor's timer does it every 30 s). */
  check(): Promise<void>;
  stop(): Promise<void>;
}

/** Wire the monitor and, with an alert destination set, the alerts into a running hookrun. */
export function createServiceAlerts(
  config: Pick<Config, 'alerts'>,
  log: Logger,
  metrics: Metrics,
  tuning: Omit<Partial<AlerterOptions>, 'destinations'> = {},
): ServiceAlerts {
  const settings = config.alerts;
  const alerter = settings && new Alerter({ destinations: alertDestinations(settings.destinations), log, metrics, ...tuning });
  let monitor: ReturnType<typeof createMonitor> | undefined;
  return {
    onDead: () => monitor?.nudge(),
    onRunFailed: () => monitor?.nudge(),
    onWalRetained: (line) => alerter?.notify('wal_retained', line, { severity: 'warning' }),
    start(deps, options = {}) {
      monitor = createMonitor({ ...deps, log, alerts: alerter, settings: settings ?? DEFAULT_THRESHOLDS });
      if (options.timer !== false) monitor.start();
    },
    check: async () => monitor?.check(),
    async stop() {
      await monitor?.stop();
      await alerter?.stop(STOP_DELIVERY_MS);
    },
  };
}
