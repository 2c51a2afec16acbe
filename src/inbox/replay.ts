import type { Clock } from '../clock.js';
import type { Queryable } from '../db/database.js';
import { EVENT_STATUSES } from '../db/events.js';
import { notifyEventsChannel } from '../db/inbox-queue.js';
import { requeueEvents } from '../db/inbox-requeue.js';
import { AppError } from '../errors.js';

/**
 * How a replay treats the attempt counter. Default: reset to 0, because a
 * replay is an operator's fresh start after fixing the cause: a dead event
 * kept at 10 attempts would die again after a single failure. Pass
 * `{ resetAttempts: false }` to keep counting (the history stays in the logs
 * and `last_error` is kept until the next attempt settles).
 */
export interface ReplayOptions {
  resetAttempts?: boolean;
  /** Run only this handler again (by name); the event's other handlers are not run. */
  handler?: string;
}

/**
 * Put one event back to `pending`, due now, whatever its status (processed
 * and ignored events too: re-running is safe because handlers are
 * idempotent). Throws `not_found` for an unknown id and `conflict` while a
 * worker holds it. Running workers are woken through NOTIFY.
 */
export async function replayEvent(db: Queryable, clock: Clock, id: number, options: ReplayOptions = {}): Promise<void> {
  const ids = await requeueEvents(db, { id }, { now: clock.now(), resetAttempts: options.resetAttempts ?? true, handler: options.handler });
  if (ids.length === 0) {
    const [row] = await db.query<{ status: string }>('SELECT status FROM hookrun.webhook_events WHERE id = $1', [id]);
    if (!row) throw new AppError('not_found', `No event with id ${id}. List events with "hookrun events list".`);
    throw new AppError('conflict', `Event ${id} is being processed right now; replay it once it settles.`);
  }
  await notifyEventsChannel(db);
}

/**
 * Put every event with `status` (e.g. `dead`) back to `pending`, optionally
 * only one source or type; returns how many. `processing` cannot be replayed
 * (a worker owns those rows).
 */
export async function replayEventsByStatus(
  db: Queryable,
  clock: Clock,
  filter: { status: string; source?: string; type?: string },
  options: ReplayOptions = {},
): Promise<number> {
  if (!(EVENT_STATUSES as readonly string[]).includes(filter.status) || filter.status === 'processing') {
    const allowed = EVENT_STATUSES.filter((s) => s !== 'processing').join(', ');
    throw new AppError('bad_request', `Cannot replay status "${filter.status}": use one of ${allowed}.`);
  }
  const ids = await requeueEvents(db, filter, { now: clock.now(), resetAttempts: options.resetAttempts ?? true, handler: options.handler });
  if (ids.length > 0) await notifyEventsChannel(db);
  return ids.length;
}
