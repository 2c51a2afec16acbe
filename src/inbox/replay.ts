import type { Clock } from '../clock.js';
import type { Database } from '../db/database.js';
import { EVENT_STATUSES } from '../db/events.js';
import { AppError } from '../errors.js';
import { notifyEventsChannel } from './queue-sql.js';
import { requeueEvents } from '../deliveries/requeue-sql.js';

/**
 * How a replay treats the attempt counter and who it names. Default: reset
 * to 0, because a replay is an operator's fresh start after fixing the
 * cause: a dead delivery kept at 10 attempts would die again after a single
 * failure. Pass `{ resetAttempts: false }` to keep counting.
 */
export interface ReplayOptions {
  resetAttempts?: boolean;
  /** Run only this handler again (by name); the event's other handlers are not run. */
  handler?: string;
  /** Who asked: kept in each replayed delivery's history. */
  actor?: string;
  /** Run every step again: the deliveries' stored steps are forgotten (default: succeeded steps keep their results). */
  fromStart?: boolean;
}

/**
 * Put one event's deliveries back in the queue, due now, whatever its
 * status (processed and ignored events too: re-running is safe because
 * handlers are idempotent). Throws `not_found` for an unknown id and
 * `conflict` while its deliveries run. Running workers are woken through NOTIFY.
 */
export async function replayEvent(db: Database, clock: Clock, id: number, options: ReplayOptions = {}): Promise<void> {
  const done = await db.transaction((tx) =>
    requeueEvents(
      tx,
      { ids: [id] },
      {
        now: clock.now(),
        resetAttempts: options.resetAttempts ?? true,
        handler: options.handler,
        actor: options.actor ?? 'unknown',
        fromStart: options.fromStart,
      },
    ),
  );
  if (done.events.length === 0) {
    const [row] = await db.query<{ status: string }>('SELECT status FROM hookrun.webhook_events WHERE id = $1', [id]);
    if (!row) throw new AppError('not_found', `No event with id ${id}. List events with "hookrun events list".`);
    if (done.busy.length > 0) throw new AppError('conflict', `Event ${id} is being processed right now; replay it once it settles.`);
    if (options.handler !== undefined)
      throw new AppError('not_found', `Event ${id} has no delivery to handler "${options.handler}"; "hookrun events show ${id}" lists its handlers.`);
    throw new AppError('conflict', `Event ${id} is already waiting to be processed.`);
  }
  await notifyEventsChannel(db);
}

/** Every status a replay selects by: an event's (and, with a handler, that handler's delivery's). */
const REPLAYABLE = EVENT_STATUSES;

/**
 * Put every event with `status` (e.g. `dead`) back in the queue, optionally
 * only one source or type; returns how many.
 */
export async function replayEventsByStatus(
  db: Database,
  clock: Clock,
  filter: { status: string; source?: string; type?: string },
  options: ReplayOptions = {},
): Promise<number> {
  if (!(REPLAYABLE as readonly string[]).includes(filter.status)) {
    throw new AppError('bad_request', `Cannot replay status "${filter.status}": use one of ${REPLAYABLE.join(', ')}.`);
  }
  const done = await db.transaction((tx) =>
    requeueEvents(tx, filter, { now: clock.now(), resetAttempts: options.resetAttempts ?? true, handler: options.handler, actor: options.actor ?? 'unknown' }),
  );
  if (done.events.length > 0) await notifyEventsChannel(db);
  return done.events.length;
}
