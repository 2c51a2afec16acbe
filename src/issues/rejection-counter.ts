import type { Queryable } from '../db/database.js';
import { messageOf } from '../errors.js';
import type { Logger } from '../log.js';

/** How often counts are written: at most once a minute per route, reason and minute. */
const FLUSH_MS = 60_000;

/** Where the receivers report a refused request; counting never blocks or fails the request. */
export interface SenderRejectionSink {
  add(route: string, reason: string): void;
}

/**
 * A sender route's refused requests, counted in memory per (route, reason,
 * minute) and added to `sender_rejections` once a minute in one statement
 * (and at stop): a flood of junk costs a counter increment, not a write per
 * request. The Senders page and the `sender_rejecting` issues read the table.
 */
export class SenderRejectionCounter implements SenderRejectionSink {
  private pending = new Map<string, { route: string; reason: string; minute: number; count: number }>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;

  constructor(
    private readonly db: Queryable,
    private readonly now: () => number,
    private readonly log: Logger,
    private readonly flushMs = FLUSH_MS,
  ) {}

  add(route: string, reason: string): void {
    const minute = Math.floor(this.now() / 60_000) * 60_000;
    const key = `${route}\u0000${reason}\u0000${minute}`;
    const entry = this.pending.get(key);
    if (entry) entry.count += 1;
    else this.pending.set(key, { route, reason, minute, count: 1 });
    this.timer ??= setTimeout(() => void this.flush(), this.flushMs).unref();
  }

  /** Write what is counted now (one upsert adding the counts); a failure is logged and the counts are kept for the next flush. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    return (this.flushing ??= this.write().finally(() => (this.flushing = undefined)));
  }

  private async write(): Promise<void> {
    if (this.pending.size === 0) return;
    const rows = [...this.pending.values()];
    this.pending = new Map();
    try {
      await this.db.query(
        `INSERT INTO hookrun.sender_rejections AS r (route, reason, minute, count)
         SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::int[])
         ON CONFLICT (route, reason, minute) DO UPDATE SET count = r.count + EXCLUDED.count`,
        [rows.map((r) => r.route), rows.map((r) => r.reason), rows.map((r) => new Date(r.minute).toISOString()), rows.map((r) => r.count)],
      );
    } catch (error) {
      for (const row of rows) {
        const key = `${row.route}\u0000${row.reason}\u0000${row.minute}`;
        const entry = this.pending.get(key);
        if (entry) entry.count += row.count;
        else this.pending.set(key, row);
      }
      this.timer ??= setTimeout(() => void this.flush(), this.flushMs).unref();
      this.log.warn({ err: { message: messageOf(error) } }, 'sender rejection counts not written (database unavailable?); trying again in a minute');
    }
  }
}

/** Delete the rejection counts older than a week (the Senders page shows a day; issues look back 15 minutes). */
export async function pruneSenderRejections(db: Queryable, now: number): Promise<number> {
  const rows = await db.query('DELETE FROM hookrun.sender_rejections WHERE minute < $1::timestamptz RETURNING 1', [new Date(now - 7 * 86_400_000)]);
  return rows.length;
}
