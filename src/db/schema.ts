import { sql } from 'drizzle-orm';
import { bigint, bigserial, boolean, index, integer, json, pgSchema, primaryKey, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';

/** hookrun's own PostgreSQL schema: its tables never meet a product's `public.users` (HOOKRUN_SCHEMA renames it at run time). */
export const hookrun = pgSchema('hookrun');

const tz = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * The inbox: every verified webhook, committed before it is acknowledged.
 * Unique (source, key) makes a provider's retry a no-op: senders deliver at
 * least once, so the same event must be stored once however often it comes.
 */
export const webhookEvents = hookrun.table(
  'webhook_events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    source: text('source').notNull(),
    key: text('key').notNull(),
    type: text('type').notNull(),
    /** The verified body exactly as it came in (json keeps the text: the request's body is not stored twice). */
    payload: json('payload').notNull(),
    /** Derived from its deliveries (deliveries/event-summary.ts): pending, processed, ignored (no handler takes it), failed (will retry) or dead. */
    status: text('status').notNull().default('pending'),
    /** Its deliveries' attempts: the most any of them made in its current run. */
    attempts: integer('attempts').notNull().default(0),
    /** When a failed delivery of it is due again. */
    nextAttemptAt: tz('next_attempt_at').notNull().defaultNow(),
    /** Its failed, dead or parked deliveries' errors (prefixed by handler when it has several). */
    lastError: text('last_error'),
    receivedAt: tz('received_at').notNull().defaultNow(),
    processedAt: tz('processed_at'),
    /** A captured row's identity: each handler runs one row's changes one at a time, in id order (its deliveries' flow key). */
    orderKey: text('order_key'),
    /** A suspected replay: the earlier event of its source whose signed body was byte for byte the same (GitHub, Shopify; event-digest-sql.ts). */
    sameBodyAs: bigint('same_body_as', { mode: 'number' }),
  },
  (t) => [
    uniqueIndex('webhook_events_source_key_uq').on(t.source, t.key),
    index('webhook_events_status_idx').on(t.status, t.id),
    // The console's filters: newest first within a source or a type, a time range, a JSON path's value.
    index('webhook_events_source_idx').on(t.source, t.id),
    index('webhook_events_type_idx').on(t.type, t.id),
    // Lists in received order (an event a reconcile stores late sorts by when it was received), and time ranges.
    index('webhook_events_received_idx').on(t.receivedAt, t.id),
  ],
);

/**
 * The keys of events retention has deleted (retention.ts), kept for
 * DEDUPE_RETENTION_DAYS so that a late retry of a deleted event is still
 * answered `duplicate` and not stored again. About 100 bytes a row instead of
 * the event's ~1.5 KB.
 */
export const webhookEventKeys = hookrun.table(
  'webhook_event_keys',
  {
    source: text('source').notNull(),
    key: text('key').notNull(),
    receivedAt: tz('received_at').notNull(),
    /** On a `<source>#body` row (a body digest, event-digest-sql.ts): the first event stored with that body. */
    eventId: bigint('event_id', { mode: 'number' }),
  },
  (t) => [primaryKey({ columns: [t.source, t.key] }), index('webhook_event_keys_received_idx').on(t.receivedAt)],
);

/**
 * One row per cron run attempt, whatever triggered it. Unique (job,
 * scheduled_for, attempt) is the claim that makes a scheduled tick (and each
 * retry of it) run once across instances; manual runs have a null
 * `scheduled_for` and never collide. A `pending` row waits for `due_at`: a
 * retry, a tick queued behind a running one, or a tick caught up on resume.
 */
export const cronRuns = hookrun.table(
  'cron_runs',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    job: text('job').notNull(),
    trigger: text('trigger').notNull(),
    scheduledFor: tz('scheduled_for'),
    startedAt: tz('started_at').notNull().defaultNow(),
    finishedAt: tz('finished_at'),
    status: text('status').notNull(),
    error: text('error'),
    durationMs: integer('duration_ms'),
    /** A `running` row past this time belongs to a crashed instance and no longer blocks the job. */
    expiresAt: tz('expires_at'),
    /** 1 for a tick's first run; a retry of a failed run is the next attempt of the same tick. */
    attempt: integer('attempt').notNull().default(1),
    /** A retry's first run (the tick's attempt 1). */
    retryOf: bigint('retry_of', { mode: 'number' }),
    /** A `pending` row runs at this time. */
    dueAt: tz('due_at'),
    /** Which process ran it: `<hostname>:<pid>`. */
    instance: text('instance'),
    /** The last lines the job logged through ctx.log (at most 50 lines, 8 KB). */
    output: text('output'),
  },
  (t) => [
    uniqueIndex('cron_runs_job_scheduled_for_attempt_uq').on(t.job, t.scheduledFor, t.attempt),
    index('cron_runs_pending_idx')
      .on(t.dueAt)
      .where(sql`${t.status} = 'pending'`),
    index('cron_runs_job_started_idx').on(t.job, t.startedAt),
    index('cron_runs_running_idx')
      .on(t.job)
      .where(sql`${t.status} = 'running'`),
  ],
);

/** Scratch rows for the keep-alive job (the Supabase "pause after inactivity" workaround). */
export const pages = hookrun.table('pages', {
  id: uuid('id').primaryKey().defaultRandom(),
  title: text('title').notNull(),
  createdAt: tz('created_at').notNull().defaultNow(),
});

/**
 * Dashboard sessions ended by a logout before they expired. A session is a
 * signed value that needs no server state (it works across instances), so a
 * logout is remembered here, shared by every instance, until the session
 * would have expired anyway.
 */
export const adminSessionsRevoked = hookrun.table('admin_sessions_revoked', {
  signature: text('signature').primaryKey(),
  expiresAt: tz('expires_at').notNull(),
});

/** Mirror of the identity provider's users; `id` is the provider's id. */
export const users = hookrun.table('users', {
  id: text('id').primaryKey(),
  email: text('email'),
  firstName: text('first_name'),
  lastName: text('last_name'),
  deletedAt: tz('deleted_at'),
  sourceUpdatedAt: tz('source_updated_at').notNull(),
  /** Whose user this is: `clerk` or `workos` (AUTH_PROVIDER). */
  provider: text('provider').notNull().default('clerk'),
});

/** Mirror of the identity provider's organizations. */
export const organizations = hookrun.table('organizations', {
  id: text('id').primaryKey(),
  name: text('name'),
  slug: text('slug'),
  deletedAt: tz('deleted_at'),
  sourceUpdatedAt: tz('source_updated_at').notNull(),
});

/** Mirror of organization memberships. */
export const memberships = hookrun.table('memberships', {
  id: text('id').primaryKey(),
  organizationId: text('organization_id'),
  userId: text('user_id'),
  role: text('role'),
  deletedAt: tz('deleted_at'),
  sourceUpdatedAt: tz('source_updated_at').notNull(),
});

/** Mirror of the payment provider's customers, linked to our user when known. */
export const customers = hookrun.table('customers', {
  id: text('id').primaryKey(),
  email: text('email'),
  userId: text('user_id'),
  /** Set when the Stripe API says the customer is deleted; a deletion is final in Stripe. */
  deletedAt: tz('deleted_at'),
  sourceUpdatedAt: tz('source_updated_at').notNull(),
  /** Whose customer this is: `stripe`, `paddle` or `lemonsqueezy` (PAYMENTS_PROVIDER). */
  provider: text('provider').notNull().default('stripe'),
});

/** Mirror of the payment provider's subscriptions. */
export const subscriptions = hookrun.table('subscriptions', {
  id: text('id').primaryKey(),
  customerId: text('customer_id'),
  status: text('status'),
  priceId: text('price_id'),
  currentPeriodEnd: tz('current_period_end'),
  cancelAtPeriodEnd: boolean('cancel_at_period_end'),
  sourceUpdatedAt: tz('source_updated_at').notNull(),
  /** Whose subscription this is: `stripe`, `paddle` or `lemonsqueezy` (PAYMENTS_PROVIDER). */
  provider: text('provider').notNull().default('stripe'),
});

/**
 * An alert about a condition (a late tick, a stuck queue) sent by whichever
 * instance claimed its key first, so N instances send it once.
 */
export const alertClaims = hookrun.table('alert_claims', {
  key: text('key').primaryKey(),
  claimedAt: tz('claimed_at').notNull(),
});

/** A paused job: while its row exists, scheduled ticks are recorded `skipped` on every instance. */
export const cronPauses = hookrun.table('cron_pauses', {
  job: text('job').primaryKey(),
  pausedAt: tz('paused_at').notNull(),
});

/**
 * One row per attempt of a delivery, written in the same statement that
 * settles it: when it ran, how long, how it ended and why; and one per replay
 * (who, when). Deleted with its event (retention).
 */
export const eventAttempts = hookrun.table(
  'event_attempts',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    eventId: bigint('event_id', { mode: 'number' })
      .notNull()
      .references(() => webhookEvents.id, { onDelete: 'cascade' }),
    attempt: integer('attempt').notNull(),
    /** The delivery's run: 1, then one more per replay (a `replayed` row opens each run after the first). */
    run: integer('run').notNull().default(1),
    /** The handler this row is about (its name: a project file's, or a shipped mirror's); null when none ran. */
    handler: text('handler'),
    startedAt: tz('started_at').notNull(),
    durationMs: integer('duration_ms').notNull(),
    /** processed, failed, dead, parked; `replayed` for the replay that opened a run (`actor` says who). */
    outcome: text('outcome').notNull(),
    error: text('error'),
    /** The error's stack, trimmed to the frames that matter (the handler's file first). */
    stack: text('stack'),
    /** Who replayed (a `replayed` row): "console (session …)", "admin-api", "cli:user@host". */
    actor: text('actor'),
  },
  (t) => [index('event_attempts_event_idx').on(t.eventId, t.attempt), index('event_attempts_started_idx').on(t.startedAt)],
);

/**
 * A project's own migrations (`migrations/*.sql`) already applied, by file
 * name, with the hash of the text applied: a changed file is refused.
 */
export const projectMigrations = hookrun.table('project_migrations', {
  name: text('name').primaryKey(),
  hash: text('hash').notNull(),
  appliedAt: tz('applied_at').notNull().defaultNow(),
});
