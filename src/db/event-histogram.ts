import type { Database } from './database.js';
import { EVENT_STATUSES, type EventStatus } from './events.js';

/** The ranges the overview's chart offers, each with its bucket: per minute for an hour, coarser for longer. */
export const CHART_RANGES = {
  '1h': { spanMs: 3_600_000, bucketMs: 60_000, label: 'last hour, per minute' },
  '24h': { spanMs: 86_400_000, bucketMs: 900_000, label: 'last 24 hours, per 15 minutes' },
  '7d': { spanMs: 604_800_000, bucketMs: 7_200_000, label: 'last 7 days, per 2 hours' },
} as const;

/** One of the chart's ranges (`1h`, `24h`, `7d`). */
export type ChartRange = keyof typeof CHART_RANGES;

/** Events received per bucket, by the status each has now. */
export interface EventHistogram {
  range: ChartRange;
  /** The first bucket's start (ms epoch, UTC, a whole bucket). */
  from: number;
  bucketMs: number;
  /** For each status, a count per bucket, oldest first. */
  series: Record<EventStatus, number[]>;
}

/**
 * The overview's chart: the events received in the range, per bucket, split by
 * their current status, so the legend's totals are the status counts of the
 * events received in that range (the whole inbox, when it is younger than the
 * range). One pass over the range of `received_at` (its BRIN index).
 */
export async function eventHistogram(db: Database, now: number, range: ChartRange): Promise<EventHistogram> {
  const { spanMs, bucketMs } = CHART_RANGES[range];
  const buckets = Math.round(spanMs / bucketMs);
  const from = Math.floor(now / bucketMs) * bucketMs - (buckets - 1) * bucketMs;
  const rows = await db.query<{ slot: number; status: string; n: number }>(
    `SELECT floor((extract(epoch FROM received_at) * 1000 - $1::float8) / $2::float8)::int AS slot, status, count(*)::int AS n
     FROM hookrun.webhook_events WHERE received_at >= $3::timestamptz AND received_at < $4::timestamptz GROUP BY 1, 2`,
    [from, bucketMs, new Date(from), new Date(from + buckets * bucketMs)],
  );
  const series = Object.fromEntries(EVENT_STATUSES.map((s) => [s, new Array<number>(buckets).fill(0)])) as Record<EventStatus, number[]>;
  for (const row of rows) {
    const slot = Number(row.slot);
    if (slot >= 0 && slot < buckets && Object.hasOwn(series, row.status)) series[row.status as EventStatus][slot] = Number(row.n);
  }
  return { range, from, bucketMs, series };
}
