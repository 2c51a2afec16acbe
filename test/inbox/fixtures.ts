import { ManualClock } from '../../src/clock.js';
import type { Database } from '../../src/db/database.js';
import { EventWriter } from '../../src/db/event-writer.js';
import { claimInbox } from '../../src/inbox/claim.js';
import { summarizeEvents } from '../../src/deliveries/event-summary.js';
import type { ClaimedDelivery } from '../../src/deliveries/claimed.js';
import type { HandlerRegistry } from '../../src/deliveries/registry.js';
import { createWorker, type Worker, type WorkerDeps, type WorkerOptions } from '../../src/inbox/worker.js';
import { silentLogger } from '../../src/log.js';
import { Metrics } from '../../src/metrics.js';
import { testConfig } from '../helpers/config.js';

let seq = 0;

/** Store one event the way the receivers do (group-commit writer), returning its id. */
export async function storeEvent(db: Database, source: string, type: string, payload: unknown, key = `k_${++seq}_${Math.random()}`): Promise<number> {
  const stored = await new EventWriter(db).write({ source, key, type, payloadJson: JSON.stringify(payload) });
  return stored.id;
}

/** A worker over `db` with a manual clock (starting at real now) and fresh metrics. */
export function testWorker(
  db: Database,
  opts: { env?: Record<string, string>; handlers?: HandlerRegistry; options?: WorkerOptions; clock?: ManualClock; ingest?: WorkerDeps['ingest'] } = {},
): { worker: Worker; clock: ManualClock; metrics: Metrics } {
  const clock = opts.clock ?? new ManualClock(Date.now());
  const metrics = new Metrics();
  const worker = createWorker({
    db,
    config: testConfig(opts.env),
    clock,
    log: silentLogger,
    metrics,
    handlers: opts.handlers,
    ingest: opts.ingest,
    options: { random: () => 0.5, ...opts.options },
  });
  return { worker, clock, metrics };
}

/** Run batches until nothing is due. */
export async function drain(worker: Worker): Promise<void> {
  for (let i = 0; i < 100; i++) if ((await worker.runOnce()) === 0) return;
  throw new Error('drain: still claiming after 100 batches');
}

/** Poll `check` until it returns true or the deadline passes. */
export async function waitFor(check: () => Promise<boolean> | boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`waitFor: condition not met within ${timeoutMs} ms`);
}

/** The stored row of one event. */
export async function eventRow(db: Database, id: number) {
  const [row] = await db.query<{
    status: string;
    attempts: number;
    last_error: string | null;
    next_attempt_at: Date;
    processed_at: Date | null;
  }>('SELECT status, attempts, last_error, next_attempt_at, processed_at FROM hookrun.webhook_events WHERE id = $1', [id]);
  return row!;
}

/** The deliveries of one event, by handler: status and attempts. */
export async function deliveryRows(db: Database, eventId: number) {
  return db.query<{ handler: string; status: string; attempts: number; last_error: string | null }>(
    'SELECT handler, status, attempts, last_error FROM hookrun.handler_deliveries WHERE event_id = $1 ORDER BY handler',
    [eventId],
  );
}

/** Clerk `user.*` event (created/updated), the shape Clerk sends. */
export function clerkUser(
  type: 'user.created' | 'user.updated',
  id: string,
  updatedAt: number,
  fields: { email?: string; first?: string; last?: string } = {},
) {
  return {
    data: {
      id,
      object: 'user',
      email_addresses: [
        { id: 'idn_other', email_address: 'other@example.com' },
        { id: 'idn_primary', email_address: fields.email ?? `${id}@example.com` },
      ],
      primary_email_address_id: 'idn_primary',
      first_name: fields.first ?? 'Ada',
      last_name: fields.last ?? 'Lovelace',
      created_at: updatedAt - 1000,
      updated_at: updatedAt,
    },
    object: 'event',
    type,
    timestamp: updatedAt,
  };
}

/** Clerk `*.deleted`: only `{ deleted, id, object }`, ordered by the event `timestamp`. */
export function clerkDeleted(type: string, object: string, id: string, timestamp: number) {
  return { data: { deleted: true, id, object }, object: 'event', type, timestamp };
}

/** Clerk `organization.*` event. */
export function clerkOrganization(type: string, id: string, updatedAt: number, name = 'Acme') {
  return {
    data: { id, object: 'organization', name, slug: name.toLowerCase(), created_at: updatedAt - 1000, updated_at: updatedAt },
    object: 'event',
    type,
    timestamp: updatedAt,
  };
}

/** Clerk `organizationMembership.*` event. */
export function clerkMembership(type: string, id: string, updatedAt: number, role = 'org:member') {
  return {
    data: {
      id,
      object: 'organization_membership',
      role,
      organization: { id: 'org_1', name: 'Acme', slug: 'acme' },
      public_user_data: { user_id: 'user_1', identifier: 'ada@example.com' },
      created_at: updatedAt - 1000,
      updated_at: updatedAt,
    },
    object: 'event',
    type,
    timestamp: updatedAt,
  };
}

/** A Stripe event envelope. */
export function stripeEvent(type: string, created: number, object: Record<string, unknown>) {
  return { id: `evt_${++seq}`, object: 'event', api_version: '2025-03-31.basil', type, created, data: { object }, livemode: false };
}

/** A Stripe subscription object; `periodOn` picks the newer (item) or older (subscription) API shape. */
export function stripeSubscription(
  id: string,
  status: string,
  opts: { price?: string; periodEnd?: number; periodOn?: 'item' | 'subscription'; cancelAtPeriodEnd?: boolean } = {},
) {
  const periodEnd = opts.periodEnd ?? 1_800_000_000;
  const onItem = (opts.periodOn ?? 'item') === 'item';
  return {
    id,
    object: 'subscription',
    customer: 'cus_1',
    status,
    cancel_at_period_end: opts.cancelAtPeriodEnd ?? false,
    ...(onItem ? {} : { current_period_end: periodEnd }),
    items: { object: 'list', data: [{ id: 'si_1', price: { id: opts.price ?? 'price_basic' }, ...(onItem ? { current_period_end: periodEnd } : {}) }] },
  };
}

/** Claim the due deliveries as a worker would, and run nothing: a worker that dies right after its claim committed. */
export async function claimAndDie(db: Database, handlers: HandlerRegistry, now: number, leaseMs = 30_000): Promise<ClaimedDelivery[]> {
  const claim = await claimInbox(db, { handlers, inline: handlers.names(), paused: new Set(), now, leaseMs, limit: 10 });
  return claim.deliveries;
}

/**
 * Give stored events their deliveries (as a claim writes them, none run)
 * and put them in `status` (per handler when a function), with `attempts`
 * and an error where it failed: a test's starting point, in the one model.
 * `ids`: only these events' deliveries (default: every pending one).
 */
export async function seedDeliveries(
  db: Database,
  handlers: HandlerRegistry,
  status: string | ((handler: string, eventId: number) => string),
  o: { attempts?: number; now?: number; ids?: readonly number[]; error?: string } = {},
): Promise<void> {
  const now = o.now ?? Date.now();
  for (;;) {
    const claim = await claimInbox(db, { handlers, inline: [], paused: new Set(handlers.names()), now, leaseMs: 30_000, limit: 100 });
    if (claim.planned === 0) break;
  }
  const rows = await db.query<{ id: number; handler: string; event_id: number }>(
    `SELECT id, handler, event_id FROM hookrun.handler_deliveries WHERE ${o.ids ? 'event_id = ANY($1::bigint[])' : "status = 'pending'"}`,
    o.ids ? [o.ids] : [],
  );
  for (const row of rows) {
    const to = typeof status === 'string' ? status : status(row.handler, Number(row.event_id));
    await db.query(
      `UPDATE hookrun.handler_deliveries SET status = $2, attempts = $3, last_error = CASE WHEN $2 IN ('failed', 'dead', 'parked') THEN $6 END,
         locked_until = CASE WHEN $2 = 'running' THEN $4::timestamptz END, finished_at = CASE WHEN $2 IN ('pending', 'running', 'failed') THEN NULL ELSE $5::timestamptz END
       WHERE id = $1`,
      [row.id, to, to === 'pending' ? 0 : (o.attempts ?? 10), new Date(now + 30_000).toISOString(), new Date(now).toISOString(), o.error ?? 'boom'],
    );
  }
  await summarizeEvents(
    db,
    rows.map((r) => Number(r.event_id)),
    now,
  );
}
