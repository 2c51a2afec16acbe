import type { Database, Queryable } from './database.js';
import { addRunning, countByKey, lockControlRow, recomputeKeys, type KeyRule } from './flow-keys.js';
import type { ClaimedEvent } from './inbox-queue.js';

/** Everything a claim enforces for one handler. */
export interface ClaimRule extends KeyRule {
  /** Deliveries of the handler that may run at once, all keys together; null: no such limit. */
  globalLimit: number | null;
  /** Starts spaced `intervalMs` apart (period / limit), per key or for the whole handler. */
  rate?: { intervalMs: number; perKey: boolean };
}

/** A delivery this instance may start at `startAt` (its rate slot; now when not rate limited). */
export interface ClaimedDelivery {
  id: number;
  flowKey: string;
  /** Counts this claim: 1 on the first run. */
  attempts: number;
  startAt: number;
  /** Debounce: the earlier events folded into this run. */
  debouncedIds: number[];
  event: ClaimedEvent;
}

/** What a claim found: its deliveries, and when to look again (undefined: when woken or polled). */
export interface FlowClaim {
  deliveries: ClaimedDelivery[];
  paused: boolean;
  nextAt?: number;
}

const iso = (ms: number) => new Date(ms).toISOString();
const ms = (value: Date | string | null | undefined) => (value === null || value === undefined ? undefined : new Date(value).getTime());

/** GCRA without burst: the start slots from `tat` (or now) one interval apart, up to `until`, at most `max`. */
export function rateSlots(tat: number | undefined, now: number, intervalMs: number, until: number, max: number): number[] {
  const slots: number[] = [];
  for (let slot = Math.max(tat ?? now, now); slot <= until && slots.length < max; slot += intervalMs) slots.push(slot);
  return slots;
}

/** Running deliveries whose lease ran out (their instance died): back to waiting, counters down; returns the runs lost (a batch is one). */
async function recoverLost(tx: Queryable, rule: ClaimRule, now: number): Promise<number> {
  const lost = await tx.query<{ flow_key: string; started_at: Date | string | null }>(
    `UPDATE hookrun.handler_deliveries SET status = 'waiting', locked_until = NULL, run_after = $2::timestamptz
     WHERE handler = $1 AND status = 'running' AND locked_until <= $2::timestamptz RETURNING flow_key, started_at`,
    [rule.handler, iso(now)],
  );
  if (lost.length === 0) return 0;
  const runs = rule.batch ? [...new Map(lost.map((r) => [`${r.flow_key}\u0000${ms(r.started_at)}`, r.flow_key])).values()] : lost.map((r) => r.flow_key);
  await addRunning(tx, rule.handler, countByKey(runs, -1));
  await recomputeKeys(tx, rule, runs);
  return runs.length;
}

/** The lowest id of an inbox event not yet handed over (pending or being processed): ordered deliveries after it wait for it. */
async function firstUnhandedEvent(tx: Queryable): Promise<number> {
  const [row] = await tx.query<{ id: number | null }>(
    `SELECT least((SELECT min(id) FROM hookrun.webhook_events WHERE status = 'pending'),
                  (SELECT min(id) FROM hookrun.webhook_events WHERE status = 'processing')) AS id`,
  );
  return row?.id === null || row?.id === undefined ? Infinity : Number(row.id);
}

interface KeyRow {
  flow_key: string;
  running: number;
  tat: Date | string | null;
}

interface DeliveryRow {
  id: number;
  event_id: number;
  flow_key: string;
  attempts: number;
  run_after: Date | string;
  debounced_ids: Array<number | string> | null;
}

/**
 * Claim up to `max` deliveries of one handler that its limits allow now,
 * holding the handler's control row (claims of one handler take turns across
 * instances, so counts and rate slots are exact). Reads only ready keys
 * (`flow_keys.ready_at`), never the waiting deliveries behind them.
 * Rate-limited deliveries get start slots up to `horizonMs` ahead.
 */
export async function claimDeliveries(db: Database, rule: ClaimRule, o: { now: number; leaseMs: number; max: number; horizonMs: number }): Promise<FlowClaim> {
  return db.transaction(async (tx) => {
    const control = await lockControlRow(tx, rule.handler);
    if (control.paused) return { deliveries: [], paused: true };
    const lost = await recoverLost(tx, rule, o.now);
    const running = Math.max(0, Number(control.running) - lost);
    let room = Math.min(o.max, rule.globalLimit === null ? Infinity : rule.globalLimit - running);
    if (room <= 0) {
      if (lost > 0) await tx.query(`UPDATE hookrun.handler_controls SET running = $2 WHERE handler = $1`, [rule.handler, running]);
      return { deliveries: [], paused: false };
    }
    const until = o.now + (rule.rate ? o.horizonMs : 0);
    let globalSlots: number[] | undefined;
    if (rule.rate && !rule.rate.perKey) {
      globalSlots = rateSlots(ms(control.tat), o.now, rule.rate.intervalMs, until, room);
      room = globalSlots.length;
      if (room === 0) return { deliveries: [], paused: false, nextAt: ms(control.tat) };
    }
    const keys = await tx.query<KeyRow>(
      `SELECT flow_key, running, tat FROM hookrun.flow_keys WHERE handler = $1 AND ready_at <= $2::timestamptz ORDER BY rank LIMIT $3`,
      [rule.handler, iso(until), room],
    );
    const wanted = new Map<string, number[]>(); // key → its start slots
    for (const key of keys) {
      if (room <= 0) break;
      // A batch handler starts one batch per key per claim.
      const free = Math.min(room, rule.keyLimit === null ? room : rule.keyLimit - Number(key.running), rule.batch ? 1 : Infinity);
      const slots = rule.rate?.perKey
        ? rateSlots(ms(key.tat), o.now, rule.rate.intervalMs, until, free)
        : Array.from({ length: Math.max(0, free) }, () => o.now);
      if (slots.length === 0) continue;
      wanted.set(key.flow_key, slots);
      room -= slots.length;
    }
    let rows = await tx.query<DeliveryRow>(
      `SELECT d.id, d.event_id, d.flow_key, d.attempts, d.run_after, d.debounced_ids
       FROM unnest($2::text[], $3::int[]) AS u(flow_key, n)
       CROSS JOIN LATERAL (
         SELECT * FROM hookrun.handler_deliveries d
         WHERE d.handler = $1 AND d.flow_key = u.flow_key AND d.status = 'waiting' AND ($5::boolean OR d.run_after <= $4::timestamptz)
         ORDER BY d.rank, d.event_id LIMIT u.n) d`,
      [rule.handler, [...wanted.keys()], [...wanted.values()].map((s) => (rule.batch ? rule.batch.maxSize : s.length)), iso(o.now), rule.ordered],
    );
    // A key chosen as ready whose deliveries are not due yet (its row was stale): bring it up to date.
    const found = new Set(rows.map((r) => r.flow_key));
    await recomputeKeys(
      tx,
      rule,
      [...wanted.keys()].filter((k) => !found.has(k)),
    );
    if (rule.ordered) {
      const first = await firstUnhandedEvent(tx);
      rows = rows.filter((r) => ms(r.run_after)! <= o.now && Number(r.event_id) < first);
    }
    const deliveries = assignSlots(rows, wanted, globalSlots, rule.batch !== undefined);
    await startDeliveries(tx, rule, deliveries, o.leaseMs, running, globalSlots);
    const [next] = await tx.query<{ at: Date | string | null }>(`SELECT min(ready_at) AS at FROM hookrun.flow_keys WHERE handler = $1`, [rule.handler]);
    return { deliveries: await withEvents(tx, deliveries), paused: false, nextAt: ms(next?.at) };
  });
}

/** Give each delivery its start: its key's next slot, or the handler's when the rate is global (a batch's members share theirs). */
function assignSlots(
  rows: DeliveryRow[],
  wanted: Map<string, number[]>,
  globalSlots: number[] | undefined,
  batch: boolean,
): Array<Omit<ClaimedDelivery, 'event'> & { eventId: number }> {
  const used = new Map<string, number>();
  const units = new Map<string, number>(); // batch: key → its run's index among this claim's runs
  return rows
    .sort((a, b) => Number(a.event_id) - Number(b.event_id))
    .map((row, i) => {
      const n = batch ? 0 : (used.get(row.flow_key) ?? 0);
      used.set(row.flow_key, n + 1);
      if (!units.has(row.flow_key)) units.set(row.flow_key, units.size);
      return {
        id: Number(row.id),
        eventId: Number(row.event_id),
        flowKey: row.flow_key,
        attempts: Number(row.attempts) + 1,
        startAt: globalSlots ? globalSlots[batch ? units.get(row.flow_key)! : i]! : wanted.get(row.flow_key)![n]!,
        debouncedIds: (row.debounced_ids ?? []).map(Number),
      };
    });
}

/** The key of each run the deliveries make: one per delivery, or one per batch. */
export function runKeys(rule: Pick<ClaimRule, 'batch'>, deliveries: Array<{ flowKey: string }>): string[] {
  const keys = deliveries.map((d) => d.flowKey);
  return rule.batch ? [...new Set(keys)] : keys;
}

/** Mark the chosen deliveries running and move the counters and rate state on. */
async function startDeliveries(
  tx: Queryable,
  rule: ClaimRule,
  deliveries: Array<{ id: number; flowKey: string; startAt: number }>,
  leaseMs: number,
  running: number,
  globalSlots: number[] | undefined,
): Promise<void> {
  const interval = rule.rate?.intervalMs ?? 0;
  const lastSlot = (slots: number[]) => slots[slots.length - 1]! + interval;
  if (deliveries.length > 0) {
    await tx.query(
      `UPDATE hookrun.handler_deliveries d SET status = 'running', attempts = d.attempts + 1, started_at = u.started_at, locked_until = u.started_at + $3::interval
       FROM unnest($1::bigint[], $2::timestamptz[]) AS u(id, started_at) WHERE d.id = u.id`,
      [deliveries.map((d) => d.id), deliveries.map((d) => iso(d.startAt)), `${leaseMs} milliseconds`],
    );
    await addRunning(tx, rule.handler, countByKey(runKeys(rule, deliveries)));
    if (rule.rate?.perKey) {
      const tats = new Map<string, number>();
      for (const d of deliveries) tats.set(d.flowKey, Math.max(tats.get(d.flowKey) ?? 0, d.startAt + interval));
      await tx.query(
        `UPDATE hookrun.flow_keys k SET tat = u.tat FROM unnest($2::text[], $3::timestamptz[]) AS u(flow_key, tat) WHERE k.handler = $1 AND k.flow_key = u.flow_key`,
        [rule.handler, [...tats.keys()], [...tats.values()].map(iso)],
      );
    }
    await recomputeKeys(
      tx,
      rule,
      deliveries.map((d) => d.flowKey),
    );
  }
  const runs = runKeys(rule, deliveries).length;
  const tat = globalSlots && runs > 0 ? iso(lastSlot(globalSlots.slice(0, runs))) : null;
  await tx.query(`UPDATE hookrun.handler_controls SET running = $2, tat = coalesce($3::timestamptz, tat) WHERE handler = $1`, [
    rule.handler,
    running + runs,
    tat,
  ]);
}

/** The claimed deliveries with their events, as the handler runs them. */
async function withEvents(tx: Queryable, deliveries: Array<Omit<ClaimedDelivery, 'event'> & { eventId: number }>): Promise<ClaimedDelivery[]> {
  if (deliveries.length === 0) return [];
  const rows = await tx.query<{ id: number; source: string; key: string; type: string; payload: unknown; received_at: Date | string }>(
    `SELECT id, source, key, type, payload, received_at FROM hookrun.webhook_events WHERE id = ANY($1::bigint[])`,
    [deliveries.map((d) => d.eventId)],
  );
  const byId = new Map(rows.map((r) => [Number(r.id), r]));
  return deliveries.map(({ eventId, ...d }) => {
    const row = byId.get(eventId)!;
    const event: ClaimedEvent = {
      id: eventId,
      source: row.source,
      key: row.key,
      type: row.type,
      payload: typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload,
      attempts: d.attempts,
      receivedAt: new Date(row.received_at),
      lockedUntil: new Date(d.startAt),
      deliveries: null,
    };
    return { ...d, event };
  });
}
