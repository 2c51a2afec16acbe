import type { Queryable } from './database.js';
import { lockControlRow, type KeyRule } from './flow-keys.js';

/**
 * Make the key's row, ready, if it has none. On a database with several
 * sessions this runs on its own, outside the inbox batch: two batches making
 * the same new keys in different orders would otherwise deadlock, and a key
 * row held until a batch commits would stall the handler's claims. Its
 * readiness is brought up to date after the hand-over commits
 * (recomputeKeys), when every transaction's deliveries are visible.
 */
export async function ensureKey(db: Queryable, handler: string, flowKey: string, readyAt: number): Promise<void> {
  await db.query(`INSERT INTO hookrun.flow_keys (handler, flow_key, ready_at, rank) VALUES ($1, $2, $3::timestamptz, $3::timestamptz) ON CONFLICT DO NOTHING`, [
    handler,
    flowKey,
    iso(readyAt),
  ]);
}

/** One event handed to a flow-controlled (or paused) handler. */
export interface Handoff {
  eventId: number;
  flowKey: string;
  /** Its place in line (ms epoch): now less its priority; ordered handlers use a constant, so the event id decides. */
  rankAt: number;
  now: number;
  /**
   * Whether a finished delivery of this event is started afresh (a first
   * delivery or a replay of every handler); otherwise only a dead or parked
   * one is (a dead event's replay keeps what its handlers finished).
   */
  resetAny: boolean;
  debounce?: { periodMs: number; maxWaitMs?: number };
}

const iso = (ms: number) => new Date(ms).toISOString();

/** A new waiting delivery, or the same row started again (its place kept: a replayed ordered delivery runs before the key's later ones). */
const HANDOFF_SQL = `
  INSERT INTO hookrun.handler_deliveries AS d (handler, event_id, flow_key, status, attempts, run_after, rank, created_at, first_at, debounced_ids, finished_at)
  VALUES ($1, $2, $3, $7, 0, $4::timestamptz, $5::timestamptz, $8::timestamptz, $9::timestamptz, $10::bigint[],
          CASE WHEN $7 = 'debounced' THEN $8::timestamptz END)
  ON CONFLICT (handler, event_id) DO UPDATE
  SET status = excluded.status, attempts = 0, run_after = excluded.run_after, rank = excluded.rank, flow_key = excluded.flow_key,
      last_error = NULL, locked_until = NULL, finished_at = excluded.finished_at, first_at = excluded.first_at, debounced_ids = excluded.debounced_ids
  WHERE d.status <> 'running' AND ($6::boolean OR d.status IN ('dead', 'parked'))`;

/**
 * Hand one event to a handler's flow control, inside the inbox batch's
 * transaction. Debounce keeps one waiting delivery per key: a newer event
 * takes the waiting one's place (which is marked `debounced`, its event id
 * carried in `debounced_ids`), an older one arriving late is folded into it;
 * the run waits `period` after the latest arrival, at most `maxWait` after
 * the first. Returns the events whose delivery was folded here (their event
 * rows may now be finished). After the commit, recompute the key.
 */
export async function handOver(db: Queryable, rule: KeyRule, h: Handoff): Promise<number[]> {
  const folded: number[] = [];
  let status = 'waiting';
  let runAfter = h.now;
  let firstAt: number | null = null;
  let debounced: number[] | null = null;
  if (h.debounce) {
    // The handler's control row serialises debounce hand-overs of one handler across instances.
    await lockControlRow(db, rule.handler);
    const [prev] = await db.query<{ id: number; event_id: number; first_at: Date | string | null; debounced_ids: number[] | null }>(
      `SELECT id, event_id, first_at, debounced_ids FROM hookrun.handler_deliveries
       WHERE handler = $1 AND flow_key = $2 AND status = 'waiting' AND event_id <> $3 ORDER BY event_id DESC LIMIT 1`,
      [rule.handler, h.flowKey, h.eventId],
    );
    firstAt = prev?.first_at ? new Date(prev.first_at).getTime() : h.now;
    runAfter = Math.min(h.now + h.debounce.periodMs, h.debounce.maxWaitMs === undefined ? Infinity : firstAt + h.debounce.maxWaitMs);
    if (prev && Number(prev.event_id) > h.eventId) {
      // A late arrival: the waiting run already has a newer event; this one is folded into it.
      status = 'debounced';
      await db.query(
        `UPDATE hookrun.handler_deliveries SET debounced_ids = array_append(coalesce(debounced_ids, '{}'), $2::bigint), run_after = $3::timestamptz WHERE id = $1`,
        [prev.id, h.eventId, iso(runAfter)],
      );
    } else if (prev) {
      debounced = [...(prev.debounced_ids ?? []).map(Number), Number(prev.event_id)];
      await db.query(`UPDATE hookrun.handler_deliveries SET status = 'debounced', finished_at = $2::timestamptz WHERE id = $1`, [prev.id, iso(h.now)]);
      folded.push(Number(prev.event_id));
    }
  }
  await db.query(HANDOFF_SQL, [
    rule.handler,
    h.eventId,
    h.flowKey,
    iso(runAfter),
    iso(h.rankAt),
    h.resetAny,
    status,
    iso(h.now),
    firstAt === null ? null : iso(firstAt),
    debounced ?? (h.debounce ? [] : null),
  ]);
  return folded;
}
