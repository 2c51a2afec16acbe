import type { Clock } from '../clock.js';
import type { AlertSettings } from '../config/config.js';
import { oldestDueEvent } from '../db/alerts.js';
import type { Database } from '../db/database.js';
import { messageOf } from '../errors.js';
import type { Issue } from '../issues/issue-types.js';
import type { Logger } from '../log.js';
import type { AlertSink } from './alerter.js';

/** A scheduled job that is behind, as the cron capability reports it (see cron/overdue.ts). */
export interface OverdueReport {
  kind: 'tick_late' | 'job_stopped';
  job: string;
  key: string;
  line: string;
}

/** What the monitor watches; `overdue` is the cron capability's own check. */
export interface MonitorDeps {
  db: Database;
  clock: Clock;
  log: Logger;
  /** Where an issue's opening is told; without it issues are still recorded (the console shows them). */
  alerts?: AlertSink;
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
  /** Something just failed (an event went dead, a run failed): a pass soon, at most one per NUDGE_MS, instead of at the next tick. */
  nudge(): void;
  stop(): Promise<void>;
}

/** The shortest time between two passes a failure asks for. */
const NUDGE_MS = 2000;

/**
 * Watch the database for what needs a person: failing handlers, jobs and
 * sender routes, a backlog, a silent job, each recorded as an issue (see
 * src/issues). An issue is told to the alert channel once per opening,
 * claimed in the database, so with any number of instances it is told once.
 */
export function createMonitor(deps: MonitorDeps): Monitor {
  const { db, clock, log, alerts, settings } = deps;
  const intervalMs = deps.intervalMs ?? 30_000;
  const since = clock.now();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;

  const pass = async () => {
    // The issue detectors load at the first pass (the 30 s timer, a failure's nudge, or a drain), not before a cold start's first answer.
    const { issueKey, issueLine, runIssuePass } = await import('../issues/issue-pass.js');
    const now = clock.now();
    const oldest = await oldestDueEvent(db, now);
    const backlog =
      oldest && now - oldest.dueAt > settings.backlogSeconds * 1000
        ? `event ${oldest.id} has been due for ${Math.round((now - oldest.dueAt) / 1000)} s; ${oldest.due}${oldest.due >= 1000 ? '+' : ''} events are due`
        : undefined;
    const silent = await deps.overdue(settings.lateTickSeconds * 1000, since);
    const tell = alerts && {
      opened: (issue: Issue) => alerts.notify('issue', issueLine(issue), { key: issueKey(issue) }),
      cleared: (issue: Issue) => alerts.resolve('issue', issueKey(issue), `issue #${issue.id} ${issue.title}: cleared by itself`),
    };
    await runIssuePass(db, now, { backlog, silent }, tell);
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

  let nudged: NodeJS.Timeout | undefined;
  return {
    start: schedule,
    check,
    nudge() {
      if (stopped || nudged) return;
      nudged = setTimeout(() => void check().finally(() => (nudged = undefined)), NUDGE_MS);
      nudged.unref();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      clearTimeout(nudged);
      await running;
    },
  };
}
