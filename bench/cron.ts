import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './servers.js';

/** Cron start lag over a run of ticks, or why it could not be measured. */
export type CronFigures = { available: false; reason: string } | { available: true; ticks: number; lagP50Ms: number; lagP99Ms: number };

/** The scheduler module the cron figure depends on (issue: cron service). */
const TICKER_MODULE = 'src/cron/ticker.ts';

/**
 * Lag between a tick's scheduled time and its run's start. Reported as not
 * available until the scheduler exists; see BENCHMARKS.md "Switching on the
 * processing and cron figures" for how to measure it once it does.
 */
export async function runCron(): Promise<CronFigures> {
  if (!existsSync(join(ROOT, TICKER_MODULE))) return { available: false, reason: `${TICKER_MODULE} (the scheduler) does not exist yet` };
  return { available: false, reason: `${TICKER_MODULE} exists, but the bench has no cron measurement wired in yet (see BENCHMARKS.md)` };
}
