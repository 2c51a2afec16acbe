import { sql } from 'drizzle-orm';
import { bigint, bigserial, boolean, index, integer, jsonb, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { hookrun, webhookEvents } from './schema.js';

const tz = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * Events stored and not yet turned into deliveries: written by the statement
 * that stores the event, taken by a worker's claim, which writes the event's
 * deliveries in the same transaction (inbox/plan.ts). Nothing is stored
 * without either a row here or its deliveries.
 */
export const newEvents = hookrun.table('new_events', {
  eventId: bigint('event_id', { mode: 'number' }).primaryKey(),
});

/**
 * The unit of work: one handler's delivery of one event, for every handler
 * that takes the event, with or without flow options. Claimed, leased,
 * settled, retried, parked, sent dead and replayed on its own; the event's
 * status is derived from its deliveries (deliveries/event-summary.ts).
 * `pending` → `running` → `processed` | `failed` (due again at `run_after`)
 * | `dead` | `parked` (ordered, out of attempts: its key goes on) |
 * `debounced` (folded into a later event's run). Deleted with its event.
 */
export const handlerDeliveries = hookrun.table(
  'handler_deliveries',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    eventId: bigint('event_id', { mode: 'number' })
      .notNull()
      .references(() => webhookEvents.id, { onDelete: 'cascade' }),
    handler: text('handler').notNull(),
    /**
     * The key flow control groups it by ('' for a flow-controlled handler
     * without a key function); for a handler without flow options, the
     * captured row's identity (one row's changes run in commit order) or null.
     */
    flowKey: text('flow_key'),
    status: text('status').notNull().default('pending'),
    /** Attempts in this run (a replay starts a new run at 0); the lease's fencing token. */
    attempts: integer('attempts').notNull().default(0),
    /** Not started before this: a retry's backoff, a debounce's quiet period. */
    runAfter: tz('run_after').notNull().defaultNow(),
    /** Its place in line among its handler's deliveries: when it became due, less its priority; ordered ones share one rank (the event id decides). */
    rank: tz('rank').notNull().defaultNow(),
    lockedUntil: tz('locked_until'),
    /** When its current or last attempt started (a rate limit's slot for a claimed one). */
    startedAt: tz('started_at'),
    /** How long its last attempt ran: with `started_at` and `status`, the processed attempt's history (event_attempts keeps the others). */
    durationMs: integer('duration_ms'),
    finishedAt: tz('finished_at'),
    lastError: text('last_error'),
    createdAt: tz('created_at').notNull().defaultNow(),
    /** Its event has other deliveries: settling it re-reads them for the event's status. */
    shared: boolean('shared').notNull().default(false),
    /** 1, then one more per replay: attempts are numbered within a run. */
    run: integer('run').notNull().default(1),
    /** Debounce: the events folded into this run. */
    debouncedIds: bigint('debounced_ids', { mode: 'number' }).array(),
  },
  (t) => [
    uniqueIndex('handler_deliveries_event_handler_uq').on(t.eventId, t.handler),
    index('handler_deliveries_due_idx')
      .on(t.handler, t.runAfter)
      .where(sql`${t.status} in ('pending', 'failed')`),
    index('handler_deliveries_open_idx')
      .on(t.handler, t.flowKey, t.rank, t.eventId)
      .where(sql`${t.flowKey} is not null and ${t.status} in ('pending', 'failed')`),
    // Retries and paused deliveries of handlers without flow options, oldest due first: what the backlog alert reads.
    index('handler_deliveries_inline_due_idx')
      .on(t.runAfter)
      .where(sql`${t.flowKey} is null and ${t.status} in ('pending', 'failed')`),
    index('handler_deliveries_running_idx')
      .on(t.handler, t.flowKey)
      .where(sql`${t.status} = 'running'`),
    index('handler_deliveries_ended_idx')
      .on(t.handler, t.status)
      .where(sql`${t.status} in ('dead', 'parked')`),
  ],
);

/**
 * A delivery's durable steps (`ctx.step`, `ctx.sleep`, `ctx.waitForEvent`):
 * one row per step id, written when the step ends (fenced by the delivery's
 * attempt), so a retry, a replay or a resume after a crash returns a
 * succeeded step's result instead of running it again. `succeeded` |
 * `failed` (retried with the delivery) | `sleeping` (until `wake_at`) |
 * `waiting` (for an event whose `wait_key` matches, until `wake_at`).
 * Deleted with its delivery.
 */
export const deliverySteps = hookrun.table(
  'delivery_steps',
  {
    deliveryId: bigint('delivery_id', { mode: 'number' })
      .notNull()
      .references(() => handlerDeliveries.id, { onDelete: 'cascade' }),
    stepId: text('step_id').notNull(),
    /** Its place among the delivery's steps (0, 1, …): a later attempt must call them in the same order. */
    seq: integer('seq').notNull(),
    status: text('status').notNull(),
    /** The step's JSON result (null for a step that returned nothing, a sleep, a wait that timed out). */
    result: jsonb('result'),
    error: text('error'),
    /** Times its function ran and failed or succeeded. */
    attempts: integer('attempts').notNull().default(0),
    startedAt: tz('started_at'),
    durationMs: integer('duration_ms'),
    /** A sleep's end; a wait's timeout. */
    wakeAt: tz('wake_at'),
    /** A wait: `<source> <type>`, the matched path and its value, as one key. */
    waitKey: text('wait_key'),
    /** A wait's matching event, once one arrived. */
    matchedEventId: bigint('matched_event_id', { mode: 'number' }),
  },
  (t) => [
    primaryKey({ columns: [t.deliveryId, t.stepId] }),
    index('delivery_steps_wait_idx')
      .on(t.waitKey)
      .where(sql`${t.status} = 'waiting'`),
  ],
);

/**
 * The (event name, path) pairs some wait has matched on: a new event is
 * checked against the waits of its type through these paths, one index probe each.
 */
export const waitPaths = hookrun.table(
  'wait_paths',
  {
    eventName: text('event_name').notNull(),
    path: text('path').notNull(),
  },
  (t) => [primaryKey({ columns: [t.eventName, t.path] })],
);

/**
 * The state of one (handler, key) of a flow-controlled handler while it has
 * deliveries waiting or a rate window open: when it may start the next one
 * (`ready_at`, a lower bound the claim checks), its place in line, its rate
 * state (GCRA's theoretical arrival time). Removed when idle: a key seen once
 * leaves no row behind (`idle_until`: when an idle key's rate window closes).
 */
export const flowKeys = hookrun.table(
  'flow_keys',
  {
    handler: text('handler').notNull(),
    flowKey: text('flow_key').notNull(),
    readyAt: tz('ready_at'),
    rank: tz('rank'),
    tat: tz('tat'),
    idleUntil: tz('idle_until'),
  },
  (t) => [
    primaryKey({ columns: [t.handler, t.flowKey] }),
    index('flow_keys_ready_idx')
      .on(t.handler, t.readyAt)
      .where(sql`${t.readyAt} is not null`),
    index('flow_keys_idle_idx')
      .on(t.handler, t.idleUntil)
      .where(sql`${t.idleUntil} is not null`),
  ],
);

/**
 * One row per handler that flow control or an operator has touched: paused
 * or not (every instance, across restarts) and the rate state of a limit on
 * the whole handler. A flow claim locks it first, so claims of one handler
 * take turns across instances.
 */
export const handlerControls = hookrun.table('handler_controls', {
  handler: text('handler').primaryKey(),
  paused: boolean('paused').notNull().default(false),
  pausedAt: tz('paused_at'),
  tat: tz('tat'),
});
