import type { Database } from '../db/database.js';
import type { ClaimedDelivery, ClaimedEvent } from '../deliveries/claimed.js';
import { summarizeEvents } from '../deliveries/event-summary.js';
import type { HandlerRegistry } from '../deliveries/registry.js';
import { orderKeyTouches, planDeliveries } from './plan.js';
import { touchKeys } from '../flow/key-state.js';
import { claimDueDeliveries, insertDeliveries, markIgnored, takeNewEvents } from './queue-sql.js';
import { wakeWaits } from '../steps/wait-sql.js';

/** What one inbox claim took: the deliveries this worker runs now, and whether flow-controlled handlers got work. */
export interface InboxClaim {
  deliveries: ClaimedDelivery[];
  /** New events turned into deliveries. */
  planned: number;
  /** New events no handler takes: stored as `ignored`. */
  ignored: ClaimedEvent[];
  /** Flow-controlled deliveries were written: their claimer should look now. */
  flowWork: boolean;
}

/**
 * One claim of the inbox, in one transaction: take up to `limit` new events
 * and write their deliveries (those of handlers that run inline are claimed
 * by this worker at once, the others wait for their claim), then claim the
 * inline handlers' due deliveries (retries, replays, expired leases) up to
 * the rest of the limit. The claim commits before any handler runs, so each
 * claim counts as an attempt even if the process dies mid-handler.
 */
export async function claimInbox(
  db: Database,
  o: { handlers: HandlerRegistry; inline: readonly string[]; paused: ReadonlySet<string>; now: number; leaseMs: number; limit: number },
): Promise<InboxClaim> {
  return db.transaction(async (tx) => {
    const fresh = await takeNewEvents(tx, o.limit);
    const plan = planDeliveries(fresh, o.handlers, o.paused, o.now);
    const written = await insertDeliveries(tx, plan.deliveries, o);
    // Waits these events match: their deliveries are due now (a flow-controlled one's key too, in the one key order).
    const woken = await wakeWaits(
      tx,
      fresh.map((e) => e.id),
      o.now,
    );
    const keys = [
      ...plan.keys,
      ...woken.filter((w) => w.flowKey !== null).map((w) => ({ handler: w.handler, flowKey: w.flowKey!, readyAt: o.now, rank: w.rank })),
    ];
    await touchKeys(tx, orderKeyTouches(keys));
    await markIgnored(tx, plan.ignored, o.now);
    const deadAtPlan = written.filter((w) => w.status === 'dead').map((w) => w.eventId);
    await summarizeEvents(tx, deadAtPlan, o.now);
    const byId = new Map(fresh.map((e) => [e.id, e]));
    const shared = new Set(plan.deliveries.filter((d) => d.shared).map((d) => d.eventId));
    const running: ClaimedDelivery[] = written
      .filter((w) => w.status === 'running')
      .map((w) => ({
        id: w.id,
        handler: w.handler,
        attempts: 1,
        flowKey: null,
        shared: shared.has(w.eventId),
        startAt: o.now,
        event: { ...byId.get(w.eventId)!, attempts: 1 },
      }));
    const due = await claimDueDeliveries(tx, o.inline, { now: o.now, leaseMs: o.leaseMs, limit: Math.max(o.limit - running.length, Math.ceil(o.limit / 10)) });
    const ignored = plan.ignored.map((id) => byId.get(id)!);
    return { deliveries: [...running, ...due], planned: fresh.length, ignored, flowWork: keys.length > 0 };
  });
}
