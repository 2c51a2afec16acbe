import { sql } from 'drizzle-orm';
import { bigint, bigserial, boolean, index, integer, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { hookrun, webhookEvents } from './schema.js';

const tz = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * One handler's delivery of one event, for handlers with flow options (or
 * paused): the inbox hands the event over and the flow claimer starts it
 * when its limits allow. `waiting` → `running` → `processed`, `dead`,
 * `parked` (ordered, out of attempts) or `debounced` (folded into a later
 * event's run). Deleted with its event.
 */
export const handlerDeliveries = hookrun.table(
  'handler_deliveries',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    handler: text('handler').notNull(),
    eventId: bigint('event_id', { mode: 'number' })
      .notNull()
      .references(() => webhookEvents.id, { onDelete: 'cascade' }),
    /** What the handler's key function returned ('' without one). */
    flowKey: text('flow_key').notNull().default(''),
    status: text('status').notNull().default('waiting'),
    attempts: integer('attempts').notNull().default(0),
    /** Not started before this: a retry's backoff, a debounce's quiet period. */
    runAfter: tz('run_after').notNull().defaultNow(),
    /** Its place in line: when it was handed over, less its priority (ordered handlers: the event id decides). */
    rank: tz('rank').notNull().defaultNow(),
    lockedUntil: tz('locked_until'),
    /** The start its claim granted (a rate limit's slot): the handler is called then. */
    startedAt: tz('started_at'),
    lastError: text('last_error'),
    createdAt: tz('created_at').notNull().defaultNow(),
    finishedAt: tz('finished_at'),
    /** Debounce: when the key's first folded event came (maxWait counts from it), and the events folded into this run. */
    firstAt: tz('first_at'),
    debouncedIds: bigint('debounced_ids', { mode: 'number' }).array(),
  },
  (t) => [
    uniqueIndex('handler_deliveries_handler_event_uq').on(t.handler, t.eventId),
    index('handler_deliveries_next_idx')
      .on(t.handler, t.flowKey, t.rank, t.eventId)
      .where(sql`${t.status} = 'waiting'`),
    index('handler_deliveries_due_idx')
      .on(t.handler, t.flowKey, t.runAfter)
      .where(sql`${t.status} = 'waiting'`),
    index('handler_deliveries_running_idx')
      .on(t.handler, t.lockedUntil)
      .where(sql`${t.status} = 'running'`),
    index('handler_deliveries_event_idx').on(t.eventId),
    index('handler_deliveries_status_idx').on(t.handler, t.status),
  ],
);

/**
 * Each (handler, key) with work: how many of its deliveries run, its rate
 * state (GCRA's theoretical arrival time) and when it may start the next one
 * (`ready_at`; null while it has nothing waiting or is at its limit), so a
 * claim reads only the keys that can start, however many wait.
 */
export const flowKeys = hookrun.table(
  'flow_keys',
  {
    handler: text('handler').notNull(),
    flowKey: text('flow_key').notNull(),
    running: integer('running').notNull().default(0),
    tat: tz('tat'),
    readyAt: tz('ready_at'),
    rank: tz('rank'),
  },
  (t) => [
    primaryKey({ columns: [t.handler, t.flowKey] }),
    index('flow_keys_ready_idx')
      .on(t.handler, t.readyAt)
      .where(sql`${t.readyAt} is not null`),
    index('flow_keys_any_ready_idx')
      .on(t.readyAt)
      .where(sql`${t.readyAt} is not null`),
  ],
);

/**
 * One row per handler that flow control or an operator has touched: paused
 * or not (every instance, across restarts), its deliveries running and its
 * rate state when the limits are not per key. Claims lock it, which makes
 * them one at a time per handler across instances.
 */
export const handlerControls = hookrun.table('handler_controls', {
  handler: text('handler').primaryKey(),
  paused: boolean('paused').notNull().default(false),
  pausedAt: tz('paused_at'),
  running: integer('running').notNull().default(0),
  tat: tz('tat'),
});
