import type { Queryable } from '../db/database.js';
import type { ClaimRule } from './rule.js';

/** A flow key that now has work: made if missing, its readiness brought forward to `readyAt` (a lower bound the claim checks). */
export interface KeyTouch {
  handler: string;
  flowKey: string;
  readyAt: number;
  rank: number;
}

/** What one key's deliveries say right now (one probe of its head, its newest and its running ones). */
export interface KeyProbe {
  flowKey: string;
  tat: number | undefined;
  /** The best-placed waiting delivery (pending or failed): its rank, due time, event and arrival; undefined when none waits. */
  head?: { rank: number; runAfter: number; eventId: number; createdAt: number };
  /** Debounce: when the newest waiting delivery is due (its arrival plus the quiet period). */
  newestRunAfter?: number;
  /** How many wait, counted up to the probe's `countUpTo` (a batch's maxSize); 0 when not counted. */
  waiting: number;
  /** Runs of this key going on (a batch counts once). */
  running: number;
}

/** What a key's row should say: when it may start the next delivery (null: not until something ends), or that it is idle. */
export type KeyState = { kind: 'waiting'; readyAt: number | null; rank: number } | { kind: 'busy' } | { kind: 'idle'; until: number } | { kind: 'gone' };

/**
 * A key's readiness from its probe, the one rule the claim and the key rows
 * share: nothing waiting → busy while its runs go on, then idle while its
 * rate window is open, then gone; at its concurrency limit (ordered: one at
 * a time) → not before one ends; else when its head is due, later for a
 * debounce (quiet period of the newest, bounded by maxWait from the oldest)
 * or a batch (full, or maxWait from the oldest) and its rate slot.
 */
export function keyState(rule: ClaimRule, probe: KeyProbe, now: number): KeyState {
  const head = probe.head;
  if (!head) {
    if (probe.running > 0) return { kind: 'busy' };
    if (probe.tat !== undefined && probe.tat > now) return { kind: 'idle', until: probe.tat };
    return { kind: 'gone' };
  }
  if (rule.keyLimit !== null && probe.running >= rule.keyLimit) return { kind: 'waiting', readyAt: null, rank: head.rank };
  let readyAt = head.runAfter;
  if (rule.debounce) {
    const quiet = probe.newestRunAfter ?? head.runAfter;
    readyAt = rule.debounce.maxWaitMs === undefined ? quiet : Math.min(quiet, head.createdAt + rule.debounce.maxWaitMs);
  }
  if (rule.batch && probe.waiting < rule.batch.maxSize) readyAt = Math.max(readyAt, head.createdAt + rule.batch.maxWaitMs);
  if (rule.rate?.perKey && probe.tat !== undefined) readyAt = Math.max(readyAt, probe.tat);
  return { kind: 'waiting', readyAt, rank: head.rank };
}

const ms = (value: Date | string | null | undefined) => (value === null || value === undefined ? undefined : new Date(value).getTime());
const iso = (value: number) => new Date(value).toISOString();

/**
 * Probe keys of one handler: the head by rank (pending or failed), the
 * newest (debounce), how many wait up to a bound (the claim's room, a batch's maxSize) and how many runs
 * go on, each an index probe, so a key with a million waiting costs the same
 * as one with one.
 */
const PROBE_SQL = `
  SELECT k.flow_key, k.tat, h.rank AS head_rank, h.run_after AS head_run_after, h.event_id AS head_event, h.created_at AS head_created,
    CASE WHEN $3::boolean THEN (SELECT n.run_after FROM hookrun.handler_deliveries n
      WHERE n.handler = $1 AND n.flow_key = k.flow_key AND n.status IN ('pending', 'failed') ORDER BY n.rank DESC, n.event_id DESC LIMIT 1) END AS newest_run_after,
    CASE WHEN $4::int IS NULL THEN 0 ELSE (SELECT count(*) FROM (SELECT 1 FROM hookrun.handler_deliveries c
      WHERE c.handler = $1 AND c.flow_key = k.flow_key AND c.status IN ('pending', 'failed') LIMIT $4::int) w) END AS waiting,
    (SELECT CASE WHEN $5::boolean THEN count(DISTINCT r.started_at) ELSE count(*) END FROM hookrun.handler_deliveries r
      WHERE r.handler = $1 AND r.flow_key = k.flow_key AND r.status = 'running') AS running
  FROM hookrun.flow_keys k
  LEFT JOIN LATERAL (
    SELECT d.rank, d.run_after, d.event_id, d.created_at FROM hookrun.handler_deliveries d
    WHERE d.handler = $1 AND d.flow_key = k.flow_key AND d.status IN ('pending', 'failed') ORDER BY d.rank, d.event_id LIMIT 1
  ) h ON true
  WHERE k.handler = $1 AND k.flow_key = ANY($2::text[])`;

interface ProbeRow {
  flow_key: string;
  tat: Date | string | null;
  head_rank: Date | string | null;
  head_run_after: Date | string | null;
  head_event: number | string | null;
  head_created: Date | string | null;
  newest_run_after: Date | string | null;
  waiting: number | string;
  running: number | string;
}

/** The most waiting deliveries of one key a probe counts (a claim's room is smaller in practice). */
const MAX_COUNTED = 1000;

/**
 * Probe these keys (their rows locked by the caller). `countUpTo`: count each
 * key's waiting deliveries up to this many (a claim's room, so one key with
 * one delivery does not take the room of the others); a batch counts up to
 * its maxSize.
 */
export async function probeKeys(tx: Queryable, rule: ClaimRule, keys: readonly string[], countUpTo?: number): Promise<Map<string, KeyProbe>> {
  if (keys.length === 0) return new Map();
  const upTo = rule.batch?.maxSize ?? (countUpTo === undefined ? null : Math.min(countUpTo, MAX_COUNTED));
  const rows = await tx.query<ProbeRow>(PROBE_SQL, [rule.handler, keys, rule.debounce !== undefined, upTo, rule.batch !== undefined]);
  return new Map(
    rows.map((r) => [
      r.flow_key,
      {
        flowKey: r.flow_key,
        tat: ms(r.tat),
        head:
          r.head_rank === null
            ? undefined
            : { rank: ms(r.head_rank)!, runAfter: ms(r.head_run_after)!, eventId: Number(r.head_event), createdAt: ms(r.head_created)! },
        newestRunAfter: ms(r.newest_run_after),
        waiting: Number(r.waiting),
        running: Number(r.running),
      },
    ]),
  );
}

/**
 * Write these keys' rows from their deliveries (locked by the caller): when
 * each may start next, its place in line, or that it is idle until its rate
 * window closes; a key with nothing waiting, running or open is removed.
 */
export async function refreshKeys(tx: Queryable, rule: ClaimRule, keys: readonly string[], now: number): Promise<void> {
  const probes = await probeKeys(tx, rule, keys);
  const update: Array<{ key: string; readyAt: number | null; rank: number | null; idleUntil: number | null }> = [];
  const gone: string[] = [];
  for (const probe of probes.values()) {
    const state = keyState(rule, probe, now);
    if (state.kind === 'gone') gone.push(probe.flowKey);
    else if (state.kind === 'idle') update.push({ key: probe.flowKey, readyAt: null, rank: null, idleUntil: state.until });
    else if (state.kind === 'busy') update.push({ key: probe.flowKey, readyAt: null, rank: null, idleUntil: null });
    else update.push({ key: probe.flowKey, readyAt: state.readyAt, rank: state.rank, idleUntil: null });
  }
  if (update.length > 0)
    await tx.query(
      `UPDATE hookrun.flow_keys k SET ready_at = u.ready_at, rank = coalesce(u.rank, k.rank), idle_until = u.idle_until
       FROM unnest($2::text[], $3::timestamptz[], $4::timestamptz[], $5::timestamptz[]) AS u(flow_key, ready_at, rank, idle_until)
       WHERE k.handler = $1 AND k.flow_key = u.flow_key`,
      [
        rule.handler,
        update.map((u) => u.key),
        update.map((u) => (u.readyAt === null ? null : iso(u.readyAt))),
        update.map((u) => (u.rank === null ? null : iso(u.rank))),
        update.map((u) => (u.idleUntil === null ? null : iso(u.idleUntil))),
      ],
    );
  if (gone.length > 0) await tx.query(`DELETE FROM hookrun.flow_keys WHERE handler = $1 AND flow_key = ANY($2::text[])`, [rule.handler, gone]);
}

/**
 * Lock these keys' rows of one handler in key order (the one order every
 * writer of key rows takes), making any that is missing; returns each one's
 * rate state. Call it once per transaction, with every key it will touch.
 */
export async function lockKeys(tx: Queryable, handler: string, keys: readonly string[], now: number): Promise<Map<string, number | undefined>> {
  if (keys.length === 0) return new Map();
  const rows = await tx.query<{ flow_key: string; tat: Date | string | null }>(
    `INSERT INTO hookrun.flow_keys AS k (handler, flow_key, ready_at, rank)
     SELECT $1, u.flow_key, $3::timestamptz, $3::timestamptz FROM unnest($2::text[]) AS u(flow_key) ORDER BY u.flow_key COLLATE "C"
     ON CONFLICT (handler, flow_key) DO UPDATE SET idle_until = k.idle_until
     RETURNING flow_key, tat`,
    [handler, [...new Set(keys)], iso(now)],
  );
  return new Map(rows.map((r) => [r.flow_key, ms(r.tat)]));
}

/** Remove the idle keys of a handler whose rate window has closed (its own statement: it waits for no one and holds nothing after). */
export async function sweepIdleKeys(db: Queryable, handler: string, now: number): Promise<void> {
  await db.query(
    `DELETE FROM hookrun.flow_keys k WHERE k.ctid = ANY(ARRAY(
       SELECT i.ctid FROM hookrun.flow_keys i WHERE i.handler = $1 AND i.idle_until <= $2::timestamptz FOR UPDATE SKIP LOCKED))
     AND k.idle_until <= $2::timestamptz`,
    [handler, iso(now)],
  );
}

/**
 * Make or bring forward the key rows of new flow-controlled deliveries, in
 * (handler, key) order, the one order every writer of key rows locks them in.
 * An idle key that gets work stops being idle.
 */
export async function touchKeys(tx: Queryable, keys: readonly KeyTouch[]): Promise<void> {
  if (keys.length === 0) return;
  await tx.query(
    `INSERT INTO hookrun.flow_keys AS k (handler, flow_key, ready_at, rank)
     SELECT u.handler, u.flow_key, u.ready_at, u.rank FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::timestamptz[]) AS u(handler, flow_key, ready_at, rank)
     ORDER BY u.handler COLLATE "C", u.flow_key COLLATE "C"
     ON CONFLICT (handler, flow_key) DO UPDATE
     SET ready_at = least(k.ready_at, excluded.ready_at), rank = least(k.rank, excluded.rank), idle_until = NULL`,
    [keys.map((k) => k.handler), keys.map((k) => k.flowKey), keys.map((k) => iso(k.readyAt)), keys.map((k) => iso(k.rank))],
  );
}
