import { sql } from 'drizzle-orm';
import { bigint, bigserial, index, integer, jsonb, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { hookrun, webhookEvents } from './schema.js';

const tz = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * The request an event came in: its headers with secrets and signatures
 * masked, the body exactly as received, and how it was verified. Kept beside
 * the event, not in it, so the inbox's hot rows stay small; deleted with it.
 */
export const eventRequests = hookrun.table('event_requests', {
  eventId: bigint('event_id', { mode: 'number' })
    .primaryKey()
    .references(() => webhookEvents.id, { onDelete: 'cascade' }),
  /** Header name (lowercase) → value; secrets, signatures and cookies replaced by a mask. */
  headers: jsonb('headers').notNull(),
  /** The body's bytes as text, as the signature was checked over them; null when they are the event's payload (a JSON body is stored once). */
  body: text('body'),
  /** What verified it, e.g. "stripe-signature v1, timestamp 3 s old". */
  verification: text('verification').notNull(),
});

/**
 * The values a payload can be found by without reading it: the ids it
 * carries (`cus_…`, `sub_…`, `user_…`, a uuid) and its emails (lowercased),
 * written by the statement that stores the event (db/search-keys.ts). An
 * equals search for such a value reads this narrow index; any other search
 * reads the events of a time range. Deleted with its event (retention).
 */
export const eventSearch = hookrun.table(
  'event_search',
  {
    value: text('value').notNull(),
    eventId: bigint('event_id', { mode: 'number' }).notNull(),
  },
  (t) => [index('event_search_value_idx').on(t.value, t.eventId), index('event_search_event_brin').using('brin', t.eventId)],
);

/**
 * A bulk replay: which events (a filter, or ids picked by hand), up to which
 * id it was started, at what rate, how far it got, and who asked. The row is
 * the work (any instance advances it) and its progress; who started or
 * cancelled it, and when, is in the one audit (`audit_entries`).
 */
export const replayBatches = hookrun.table(
  'replay_batches',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    createdAt: tz('created_at').notNull().defaultNow(),
    /** Who asked, as the audit names them ("alice via console"): each replayed delivery's history says it. */
    actor: text('actor').notNull(),
    /** The filter (the events list's), or { ids: [...] } for a hand-picked set. */
    selection: jsonb('selection').notNull(),
    /** Only this handler of each event runs again; null: all of them. */
    handler: text('handler'),
    /** Events at most this id: those that existed when it started. */
    maxEventId: bigint('max_event_id', { mode: 'number' }).notNull(),
    /** Events put back per second. */
    rate: integer('rate').notNull(),
    total: integer('total').notNull(),
    replayed: integer('replayed').notNull().default(0),
    /** The last event id replayed (events go in id order). */
    cursor: bigint('cursor', { mode: 'number' }).notNull().default(0),
    /** running → done | cancelled */
    status: text('status').notNull().default('running'),
    /** The instance advancing it holds it until then. */
    lockedUntil: tz('locked_until'),
    finishedAt: tz('finished_at'),
  },
  (t) => [
    index('replay_batches_running_idx')
      .on(t.id)
      .where(sql`${t.status} = 'running'`),
  ],
);

/**
 * Repeated failures of one kind grouped into one issue (a handler's errors
 * with one message, a sender's rejections, a job's failures, a silent job, a
 * growing backlog): open → acknowledged → resolved, resolved by itself when
 * the condition clears and reopened when it comes back. Alerted once per
 * opening, not once per occurrence.
 */
export const issues = hookrun.table(
  'issues',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    /** What makes two failures the same issue, e.g. "handler:sync-crm:<message hash>". */
    fingerprint: text('fingerprint').notNull(),
    /** handler_failing | sender_rejecting | job_failing | job_silent | backlog */
    kind: text('kind').notNull(),
    /** The handler, route or job it is about. */
    subject: text('subject').notNull(),
    title: text('title').notNull(),
    /** The latest occurrence's detail (an error message, a count). */
    detail: text('detail'),
    /** open | acknowledged | resolved */
    status: text('status').notNull().default('open'),
    occurrences: integer('occurrences').notNull().default(1),
    firstSeenAt: tz('first_seen_at').notNull().defaultNow(),
    lastSeenAt: tz('last_seen_at').notNull().defaultNow(),
    acknowledgedAt: tz('acknowledged_at'),
    resolvedAt: tz('resolved_at'),
    /** "auto" when the condition cleared, else who resolved it. */
    resolvedBy: text('resolved_by'),
    notifiedAt: tz('notified_at'),
  },
  (t) => [uniqueIndex('issues_fingerprint_uq').on(t.fingerprint), index('issues_status_idx').on(t.status, t.lastSeenAt)],
);

/**
 * Requests refused per sender route, reason and minute, added to by each
 * instance at most once a minute per route and reason (never once per
 * request: a flood costs a counter). The Senders page and the sender issues read it.
 */
export const senderRejections = hookrun.table(
  'sender_rejections',
  {
    route: text('route').notNull(),
    reason: text('reason').notNull(),
    minute: tz('minute').notNull(),
    count: integer('count').notNull(),
  },
  (t) => [primaryKey({ columns: [t.route, t.reason, t.minute] }), index('sender_rejections_minute_idx').on(t.minute)],
);

/**
 * The audit: every action an operator took or tried from the console, the
 * admin API or the CLI (replays, pauses, acknowledgements, runs, backfills,
 * reconciles, …), who (the signed-in name, and how), when, on what, and how
 * it ended: ok, refused (the role may not act) or failed (with why). Written
 * after the action, never in its transaction, so a failed action is recorded
 * too. Kept AUDIT_RETENTION_DAYS.
 */
export const auditEntries = hookrun.table(
  'audit_entries',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    at: tz('at').notNull().defaultNow(),
    /** The operator's name (`ADMIN_TOKENS`, `admin` for ADMIN_TOKEN, `local` for a CLI on the database without a token). */
    operator: text('operator').notNull(),
    /** Their role then: viewer | operator. */
    role: text('role').notNull(),
    /** console | api | cli */
    via: text('via').notNull(),
    /** What, e.g. "job.pause", "event.replay", "replay.start". */
    action: text('action').notNull(),
    /** On what, e.g. "nightly-report", "event 42", "replay 7"; null for an action on no one thing. */
    target: text('target'),
    /** ok | refused | failed */
    outcome: text('outcome').notNull(),
    /** Why it was refused or failed (the answer's code and message), or what it did ("12 events"). */
    detail: text('detail'),
  },
  (t) => [index('audit_entries_at_idx').on(t.at)],
);
