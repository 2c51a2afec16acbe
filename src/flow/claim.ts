import type { Database, Queryable } from '../db/database.js';
import type { ClaimedDelivery } from '../deliveries/claimed.js';
import { summarizeEvents } from '../deliveries/event-summary.js';
import { claimedDelivery } from '../deliveries/claimed.js';
import {
  countRunning,
  firstNewEvent,
  foldDebounced,
  lockControlRow,
  nextReadyAt,
  pickDue,
  pickHeads,
  readyKeys,
  requeueLost,
  setControlTat,
  setKeyTats,
  startDeliveries,
  takeLost,
} from './claim-sql.js';
import { keyState, lockKeys, probeKeys, refreshKeys } from './key-state.js';
import type { ClaimRule } from './rule.js';

/** What a claim found: its deliveries (each with its start slot), and when to look again (undefined: when woken or polled). */
export interface FlowClaim {
  deliveries: ClaimedDelivery[];
  paused: boolean;
  nextAt?: number;
}

/** GCRA without burst: the start slots from `tat` (or now) one interval apart, up to `until`, at most `max`. */
export function rateSlots(tat: number | undefined, now: number, intervalMs: number, until: number, max: number): number[] {
  const slots: number[] = [];
  for (let slot = Math.max(tat ?? now, now); slot <= until && slots.length < max; slot += intervalMs) slots.push(slot);
  return slots;
}

/** How long a key whose head waits for an earlier event to become deliveries is looked at again. */
const NEW_EVENT_WAIT_MS = 100;

/**
 * Claim up to `max` deliveries of one flow-controlled handler that its
 * limits allow now, in one transaction. Locks, always in this order: the
 * handler's control row (claims of one handler take turns across
 * instances, so counts and rate slots are exact), then every key it touches
 * in key order, in one pass; delivery rows only with SKIP LOCKED. Reads only
 * keys whose row says they may be ready, never the waiting deliveries behind
 * them. Rate-limited deliveries get start slots up to `horizonMs` ahead.
 */
export async function claimFlow(db: Database, rule: ClaimRule, o: { now: number; leaseMs: number; max: number; horizonMs: number }): Promise<FlowClaim> {
  return db.transaction(async (tx) => {
    const control = await lockControlRow(tx, rule.handler);
    if (control.paused) return { deliveries: [], paused: true };
    const lost = await takeLost(tx, rule.handler, o.now);
    const running = await countRunning(
      tx,
      rule.handler,
      rule.batch !== undefined,
      lost.map((l) => l.id),
    );
    let room = Math.min(o.max, rule.globalLimit === null ? Infinity : rule.globalLimit - running);
    const until = o.now + (rule.rate ? o.horizonMs : 0);
    let globalSlots: number[] | undefined;
    if (rule.rate && !rule.rate.perKey && room > 0) {
      globalSlots = rateSlots(control.tat, o.now, rule.rate.intervalMs, until, room);
      room = globalSlots.length;
    }
    const candidates = room > 0 ? await readyKeys(tx, rule.handler, until, room) : [];
    const keys = [...new Set([...candidates, ...lost.map((l) => l.flowKey)])];
    const tats = await lockKeys(tx, rule.handler, keys, o.now);
    await requeueLost(
      tx,
      lost.map((l) => l.id),
      o.now,
    );
    // A lost delivery waits again at once: its key is a candidate of this claim too.
    const { chosen, folded } = room > 0 ? await choose(tx, rule, keys, { ...o, room, until, tats }) : { chosen: [], folded: [] };
    const slotted = assignSlots(rule, chosen, globalSlots, tats, o.now);
    const rows = await startDeliveries(tx, slotted, o.leaseMs);
    await moveRateOn(tx, rule, slotted);
    await refreshKeys(tx, rule, keys, o.now);
    await summarizeEvents(tx, folded, o.now);
    const next = await nextReadyAt(tx, rule.handler);
    const startAt = new Map(slotted.map((s) => [s.id, s.startAt]));
    const deliveries = rows.map((row) => claimedDelivery(row, startAt.get(Number(row.delivery_id))!));
    const waitForRate = globalSlots && globalSlots.length === 0 ? control.tat : undefined;
    return { deliveries, paused: false, nextAt: next === undefined ? waitForRate : Math.max(next, waitForRate ?? next) };
  });
}

type Chosen = { id: number; flowKey: string; eventId: number };

/** Which deliveries of the candidate keys start now: each key's state decides, from a fresh probe under its lock. */
async function choose(
  tx: Queryable,
  rule: ClaimRule,
  candidates: readonly string[],
  o: { now: number; room: number; until: number; tats: ReadonlyMap<string, number | undefined> },
): Promise<{ chosen: Chosen[]; folded: number[] }> {
  const probes = await probeKeys(tx, rule, candidates, o.room);
  const ready: Array<{ key: string; free: number }> = [];
  let room = o.room;
  for (const key of candidates) {
    const probe = probes.get(key);
    if (!probe || room <= 0) continue;
    const state = keyState(rule, probe, o.now);
    if (state.kind !== 'waiting' || state.readyAt === null || state.readyAt > o.until) continue;
    // A key takes at most what it has waiting (one run for a batch or a debounce), so the room goes on to the next keys.
    let free = Math.min(room, rule.keyLimit === null ? room : rule.keyLimit - probe.running, rule.batch || rule.debounce ? 1 : probe.waiting);
    if (rule.rate?.perKey) free = rateSlots(o.tats.get(key), o.now, rule.rate.intervalMs, o.until, free).length;
    if (free <= 0) continue;
    ready.push({ key, free });
    room -= free;
  }
  if (rule.debounce) {
    return foldDebounced(
      tx,
      rule.handler,
      ready.map((r) => r.key),
      o.now,
    );
  }
  if (rule.ordered) {
    const first = await firstNewEvent(tx);
    const heads = await pickHeads(
      tx,
      rule.handler,
      ready.map((r) => r.key),
    );
    const blocked = heads.filter((h) => h.eventId >= first).map((h) => h.flowKey);
    if (blocked.length > 0)
      await tx.query(`UPDATE hookrun.flow_keys SET ready_at = $3::timestamptz WHERE handler = $1 AND flow_key = ANY($2::text[])`, [
        rule.handler,
        blocked,
        new Date(o.now + NEW_EVENT_WAIT_MS).toISOString(),
      ]);
    return { chosen: heads.filter((h) => h.runAfter <= o.now && h.eventId < first), folded: [] };
  }
  const wanted = new Map(ready.map((r) => [r.key, rule.batch ? rule.batch.maxSize : r.free]));
  return { chosen: await pickDue(tx, rule.handler, wanted, o.now), folded: [] };
}

/** Give each chosen delivery its start: its key's next rate slot, or the handler's when the rate is global (a batch's members share theirs). */
function assignSlots(
  rule: ClaimRule,
  chosen: readonly Chosen[],
  globalSlots: number[] | undefined,
  tats: ReadonlyMap<string, number | undefined>,
  now: number,
): Array<Chosen & { startAt: number }> {
  const sorted = [...chosen].sort((a, b) => a.eventId - b.eventId);
  const runOf = new Map<string, number>(); // key → index of its run among this claim's runs (a batch is one run)
  const usedOfKey = new Map<string, number>();
  return sorted.map((c, i) => {
    if (!runOf.has(c.flowKey)) runOf.set(c.flowKey, runOf.size);
    const n = rule.batch ? 0 : (usedOfKey.get(c.flowKey) ?? 0);
    usedOfKey.set(c.flowKey, n + 1);
    let startAt: number | undefined;
    if (globalSlots) startAt = globalSlots[rule.batch ? runOf.get(c.flowKey)! : i];
    else if (rule.rate?.perKey) startAt = Math.max(tats.get(c.flowKey) ?? now, now) + n * rule.rate.intervalMs;
    return { ...c, startAt: startAt ?? now };
  });
}

/** After granting slots: each key's (or the handler's) rate state moves to one interval after its last slot. */
async function moveRateOn(tx: Queryable, rule: ClaimRule, slotted: ReadonlyArray<Chosen & { startAt: number }>) {
  if (!rule.rate || slotted.length === 0) return;
  const interval = rule.rate.intervalMs;
  if (!rule.rate.perKey) return setControlTat(tx, rule.handler, Math.max(...slotted.map((s) => s.startAt)) + interval);
  const tats = new Map<string, number>();
  for (const s of slotted) tats.set(s.flowKey, Math.max(tats.get(s.flowKey) ?? 0, s.startAt + interval));
  await setKeyTats(tx, rule.handler, tats);
}
