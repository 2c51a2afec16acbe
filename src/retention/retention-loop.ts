import type { Clock } from '../clock.js';
import type { RetentionDays } from '../config/config.js';
import type { Database } from '../db/database.js';
import { messageOf } from '../errors.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import { prune, type PruneReport } from './prune.js';

/** A pass an hour keeps each chunk small; the first comes a minute after start, out of start-up's way. */
const PASS_EVERY_MS = 3_600_000;
const FIRST_PASS_AFTER_MS = 60_000;

/** The background retention of one worker process. */
export interface RetentionLoop {
  start(): void;
  /** Stop scheduling passes; resolves after a pass in progress ends. */
  stop(): Promise<void>;
  /** One pass now (tests, `hookrun prune`). */
  runOnce(): Promise<PruneReport>;
}

/**
 * Run retention (prune.ts) every hour in each process that runs the worker.
 * Instances may overlap: every step is idempotent. A failed pass is logged and
 * tried again at the next one; it never stops processing.
 */
export function createRetentionLoop(deps: { db: Database; days: RetentionDays; clock: Clock; log: Logger; metrics: Metrics }): RetentionLoop {
  const { db, days, clock, log, metrics } = deps;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  let stopped = false;
  const stopping = new AbortController();
  const runOnce = () => prune(db, days, clock.now(), { signal: stopping.signal, onDeleted: (table, rows) => metrics.retentionDeleted.inc({ table }, rows) });
  const pass = async () => {
    try {
      const report = await runOnce();
      if (report.events + report.dedupeKeys + report.cronRuns + report.auditEntries > 0) {
        log.info(
          { events: report.events, dedupeKeys: report.dedupeKeys, cronRuns: report.cronRuns, auditEntries: report.auditEntries },
          'retention: deleted old rows',
        );
      }
    } catch (error) {
      log.warn({ err: { message: messageOf(error) } }, 'retention pass failed; trying again at the next one');
    }
  };
  const schedule = (ms: number) => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = pass().finally(() => {
        running = undefined;
        schedule(PASS_EVERY_MS);
      });
    }, ms);
    timer.unref();
  };
  return {
    start() {
      if (days.events + days.dedupeKeys + days.cronRuns > 0) schedule(FIRST_PASS_AFTER_MS);
    },
    async stop() {
      stopped = true;
      stopping.abort();
      clearTimeout(timer);
      await running;
    },
    runOnce,
  };
}
