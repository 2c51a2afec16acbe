import { openDatabase } from '../src/db/client.js';
import type { Database } from '../src/db/database.js';
import { parseFlowOptions } from '../src/flow/options.js';
import { HandlerRegistry } from '../src/deliveries/registry.js';
import { FLOW_SOURCE } from './flow-fill.js';
import { benchWorker, errorCounter, storeEvents } from './flow-worker.js';
import { createDatabase } from './servers.js';

/** A handler limited to `limit` starts a second, run by the worker loop for `seconds`. */
export interface FlowRateFigures {
  limit: number;
  seconds: number;
  /** Handler starts from the first one to the end of the window, and their rate. */
  starts: number;
  perSecond: number;
  /** perSecond / limit − 1. */
  deviation: number;
  /** The most starts in any sliding 1 s window: as the handler saw them (wall clock), and by the slot each claim granted (`started_at`). */
  maxPerSecondByHandler: number;
  maxPerSecondBySlot: number;
  /** Slots granted (every claimed delivery, the window's and those claimed up to the stop). */
  slots: number;
  /** Starts in the window of an event the handler had already started (a delivery run again). */
  repeated: number;
  /** What the worker logged at error level in the window (a failed settle, a failed round), and the first message. */
  workerErrors: number;
  firstError?: string;
}

const RATE_HANDLER = 'bench-rate';

/** The most values within any half-open window [t, t + windowMs). */
export function maxInWindow(times: number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let max = 0;
  for (let lo = 0, hi = 0; hi < sorted.length; hi++) {
    while (sorted[hi]! - sorted[lo]! >= windowMs) lo++;
    max = Math.max(max, hi - lo + 1);
  }
  return max;
}

/** Whether stored events are still waiting to be turned into deliveries (hookrun.new_events). */
async function newEventsLeft(db: Database): Promise<boolean> {
  const [row] = await db.query<{ left: boolean }>(`SELECT EXISTS (SELECT 1 FROM hookrun.new_events) AS left`);
  return row!.left;
}

async function until(condition: () => boolean, deadlineMs: number, what: string): Promise<void> {
  const deadline = performance.now() + deadlineMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`flow: ${what} within ${deadlineMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * `rateLimit: { limit, period: '1s' }` on one handler, on a fresh database:
 * enough events stored for the whole window (limit × (seconds + 10)) and
 * turned into its pending deliveries by the inbox first (`runOnce` while
 * hookrun.new_events has any: no delivery starts), then the worker loop started
 * (`worker.start()`, real clock, default horizon) and each handler call's
 * start recorded (wall clock); the worker stops `seconds` after the first.
 */
export async function measureRate(baseUrl: string, o: { limit: number; seconds: number }, progress: (line: string) => void): Promise<FlowRateFigures> {
  const database = await createDatabase(baseUrl, 'flowrate');
  const db = await openDatabase({ databaseUrl: database.url });
  try {
    await db.migrate();
    const starts: number[] = [];
    const seen = new Set<number>();
    let repeated = 0;
    const record = (id: number) => {
      if (seen.has(id)) repeated += 1;
      seen.add(id);
      starts.push(performance.timeOrigin + performance.now());
    };
    const handlers = new HandlerRegistry().on(FLOW_SOURCE, 'rate.item', async ({ event }) => record(event.id), {
      name: RATE_HANDLER,
      isolated: true,
      flow: parseFlowOptions({ rateLimit: { limit: o.limit, period: '1s' } }),
    });
    await storeEvents(db, 'rate.item', 'rate', o.limit * (o.seconds + 10));
    const errors = errorCounter();
    const worker = benchWorker(db, handlers, errors.log);
    while (await newEventsLeft(db)) await worker.runOnce();
    progress(`flow: ${o.limit * (o.seconds + 10)} events turned into the rate-limited handler's pending deliveries`);
    worker.start();
    try {
      await until(() => starts.length > 0, 30_000, 'the rate-limited handler did not start');
      const first = starts[0]!;
      const windowEnd = first + o.seconds * 1000;
      await until(() => performance.timeOrigin + performance.now() >= windowEnd, o.seconds * 1000 + 5000, 'the window did not end');
      await worker.stop();
      const inWindow = starts.filter((t) => t < windowEnd);
      const rows = await db.query<{ ms: string }>(
        `SELECT extract(epoch FROM started_at) * 1000 AS ms FROM hookrun.handler_deliveries WHERE handler = $1 AND started_at IS NOT NULL`,
        [RATE_HANDLER],
      );
      const perSecond = inWindow.length / o.seconds;
      const figures: FlowRateFigures = {
        ...o,
        starts: inWindow.length,
        perSecond,
        deviation: perSecond / o.limit - 1,
        maxPerSecondByHandler: maxInWindow(inWindow, 1000),
        maxPerSecondBySlot: maxInWindow(
          rows.map((r) => Number(r.ms)),
          1000,
        ),
        slots: rows.length,
        repeated,
        workerErrors: errors.count,
        firstError: errors.first,
      };
      progress(
        `flow: rate ${o.limit}/s for ${o.seconds} s: ${figures.starts} starts, ${perSecond.toFixed(2)}/s (${(figures.deviation * 100).toFixed(1)} %), max in 1 s ${figures.maxPerSecondByHandler} by handler, ${figures.maxPerSecondBySlot} by slot; ${repeated} repeated, ${errors.count} worker errors${errors.first ? ` (${errors.first})` : ''}`,
      );
      return figures;
    } finally {
      await worker.stop();
    }
  } finally {
    await db.close();
    await database.drop();
  }
}
