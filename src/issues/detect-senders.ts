import type { Queryable } from '../db/database.js';
import { recordSighting, type Sighting } from './issue-store.js';
import { LOOKBACK_MS } from './issue-types.js';

/** Rejections of one reason on one route in the last 15 minutes from which it is an issue. */
export const SENDER_REJECTION_THRESHOLD = 10;

/**
 * Record each sender route refusing requests of one reason at least
 * `threshold` times in the last 15 minutes as a `sender_rejecting` issue.
 * Its occurrences are the route's rejections of that reason since the issue
 * was first seen (set, not added: the same for every instance).
 */
export async function detectSenderRejections(db: Queryable, now: number, threshold = SENDER_REJECTION_THRESHOLD): Promise<number> {
  const rows = await db.query<{ route: string; reason: string; n: number; first: Date | string; last: Date | string }>(
    `SELECT route, reason, sum(count)::int AS n, min(minute) AS first, max(minute) AS last FROM hookrun.sender_rejections
     WHERE minute > $1::timestamptz GROUP BY route, reason HAVING sum(count) >= $2`,
    [new Date(now - LOOKBACK_MS), threshold],
  );
  for (const row of rows) {
    const sighting: Sighting = {
      fingerprint: `sender:${row.route}:${row.reason}`,
      kind: 'sender_rejecting',
      subject: row.route,
      title: `/webhooks/${row.route} refuses requests: ${row.reason}`,
      detail: `${row.n} requests refused (${row.reason}) in the last 15 min`,
      // The last minute with rejections, ended: a flood that stopped is no longer seen.
      seenAt: new Date(Math.min(now, new Date(row.last).getTime() + 60_000)),
      occurrences: Number(row.n),
      firstSeenAt: new Date(row.first),
    };
    const total = `(SELECT coalesce(sum(r.count), 0)::int FROM hookrun.sender_rejections r
      WHERE r.route = $3 AND r.reason = $9 AND r.minute >= date_trunc('minute', i.first_seen_at))`;
    await recordSighting(db, sighting, `greatest(i.occurrences, ${total})`, [row.reason]);
  }
  return rows.length;
}
