import type { Clock } from '../clock.js';
import type { AlertSettings } from '../config.js';
import { claimAlert, oldestDueEvent } from '../db/alerts.js';
import type { Database } from '../db/database.js';
import { messageOf } from '../errors.js';
import type { Logger } from '../log.js';
import type { AlertKind, AlertSink } from './alerter.js';

/** A scheduled job that is behind, as the cron capability reports it (see cron/overdue.ts). */
export interface OverdueReport {
  kind: 'tick_late' | 'job_stopped';
  key: string;
  line: string;
}

/** What the monitor watches; `overdue` is the cron capability's own check. */
export interface MonitorDeps {
  db: Database;
  clock: Clock;
  log: Logger;
  alerts: AlertSink;
  settings: Pick<AlertSettings, 'lateTickSeconds' | 'backlogSeconds'>;
  overdue(graceMs: number, sinceMs: number): Promise<OverdueReport[]>;
  /** Between passes. Default 30 s. */
  intervalMs?: number;
}

/** The conditions no single event reports: a queue that stopped moving, a tick that never started, a job that silently stopped. */
export interface Monitor {
  start(): void;
  /** One pass at `clock.now()` (tests; the timer calls it too). Never throws. */
  check(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Watch the database for conditions that need a person. Each condition has a
 * key (the stuck event's id, the late tick's time), claimed in the database
 * before it is sent, so with any number of instances it is reported once.
 */
export function createMonitor(deps: MonitorDeps): Monitor {
  const { db, clock, log, alerts, settings } = deps;
  const intervalMs = deps.intervalMs ?? 30_000;
  const since = clock.now();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;

  const report = async (kind: AlertKind, key: string, line: string) => {
    if (await claimAlert(db, key, clock.now())) alerts.notify(kind, line);
  };

  const pass = async () => {
    const now = clock.now();
    const oldest = await oldestDueEvent(db, now);
    if (oldest && now - oldest.dueAt > settings.backlogSeconds * 1000) {
      const waited = Math.round((now - oldest.dueAt) / 1000);
      await report(
        'backlog',
        `backlog:${oldest.id}`,
        `event ${oldest.id} has been due for ${waited} s; ${oldest.due}${oldest.due >= 1000 ? '+' : ''} events are due`,
      );
    }
    for (const job of await deps.overdue(settings.lateTickSeconds * 1000, since)) await report(job.kind, job.key, job.line);
  };

  const check = () =>
    (running ??= pass()
      .catch((error) => log.warn({ err: { message: messageOf(error) } }, 'alert check failed (database unavailable?); trying again at the next pass'))
      .finally(() => (running = undefined)));

  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => void check().finally(schedule), intervalMs);
    timer.unref();
  };

  return {
    start: schedule,
    check,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
