import type { Queryable } from '../db/database.js';

/** The handlers paused on every instance (their deliveries wait; none starts). */
export async function pausedHandlerNames(db: Queryable): Promise<string[]> {
  const rows = await db.query<{ handler: string }>(`SELECT handler FROM hookrun.handler_controls WHERE paused`);
  return rows.map((r) => r.handler);
}

/**
 * Pause or resume a handler on every instance, across restarts: while paused
 * its deliveries wait (none starts); on resume they run in their order,
 * within their limits. Returns whether it was paused before.
 */
export async function setHandlerPaused(db: Queryable, handler: string, paused: boolean, now: number): Promise<boolean> {
  const [row] = await db.query<{ was: boolean | null }>(
    `WITH before AS (SELECT paused FROM hookrun.handler_controls WHERE handler = $1)
     INSERT INTO hookrun.handler_controls (handler, paused, paused_at) VALUES ($1, $2, CASE WHEN $2 THEN $3::timestamptz END)
     ON CONFLICT (handler) DO UPDATE SET paused = excluded.paused, paused_at = excluded.paused_at
     RETURNING (SELECT paused FROM before) AS was`,
    [handler, paused, new Date(now).toISOString()],
  );
  return row?.was === true;
}

/** A handler's deliveries by state, as the console, `GET /api/handlers` and `hookrun handlers list` count them. */
export interface HandlerDeliveryCounts {
  handler: string;
  paused: boolean;
  running: number;
  /** Pending deliveries by what holds them. `ready`: nothing of its own (it starts at the next claim, or waits for a limit on the whole handler). */
  waiting: { ready: number; concurrency: number; rate: number; debounce: number; batch: number; paused: number };
  /** Failed, due again after their backoff. */
  failed: number;
  parked: number;
  dead: number;
}

/**
 * Count each handler's deliveries by state straight from the rows (the
 * same rows `GET /api/events?handler=` lists): reads every unfinished,
 * dead or parked delivery; an operator's query, not a hot path.
 */
export async function handlerDeliveryCounts(db: Queryable, now: number): Promise<HandlerDeliveryCounts[]> {
  const rows = await db.query<Record<string, string | number | boolean | null>>(
    `SELECT d.handler, coalesce(bool_or(c.paused), false) AS paused,
       count(*) FILTER (WHERE d.status = 'running') AS running,
       count(*) FILTER (WHERE d.status = 'failed') AS failed,
       count(*) FILTER (WHERE d.status = 'parked') AS parked,
       count(*) FILTER (WHERE d.status = 'dead') AS dead,
       count(*) FILTER (WHERE d.status = 'pending' AND c.paused) AS w_paused,
       count(*) FILTER (WHERE d.status = 'pending' AND NOT coalesce(c.paused, false) AND d.run_after > $1::timestamptz) AS w_debounce,
       count(*) FILTER (WHERE d.status = 'pending' AND NOT coalesce(c.paused, false) AND d.run_after <= $1::timestamptz
                        AND d.flow_key IS NOT NULL AND k.flow_key IS NOT NULL AND k.ready_at IS NULL) AS w_concurrency,
       count(*) FILTER (WHERE d.status = 'pending' AND NOT coalesce(c.paused, false) AND d.run_after <= $1::timestamptz
                        AND k.ready_at > $1::timestamptz) AS w_rate,
       count(*) FILTER (WHERE d.status = 'pending' AND NOT coalesce(c.paused, false) AND d.run_after <= $1::timestamptz
                        AND (k.flow_key IS NULL OR k.ready_at <= $1::timestamptz)) AS w_ready
     FROM hookrun.handler_deliveries d
     LEFT JOIN hookrun.handler_controls c ON c.handler = d.handler
     LEFT JOIN hookrun.flow_keys k ON k.handler = d.handler AND k.flow_key = d.flow_key
     WHERE d.status IN ('pending', 'running', 'failed', 'parked', 'dead')
     GROUP BY d.handler ORDER BY d.handler`,
    [new Date(now).toISOString()],
  );
  const n = (value: unknown) => Number(value ?? 0);
  return rows.map((r) => ({
    handler: String(r.handler),
    paused: r.paused === true,
    running: n(r.running),
    waiting: { ready: n(r.w_ready), concurrency: n(r.w_concurrency), rate: n(r.w_rate), debounce: n(r.w_debounce), batch: 0, paused: n(r.w_paused) },
    failed: n(r.failed),
    parked: n(r.parked),
    dead: n(r.dead),
  }));
}

/** The keys with the most deliveries waiting for one handler. */
export async function topWaitingKeys(db: Queryable, handler: string, limit = 5): Promise<Array<{ key: string; waiting: number }>> {
  const rows = await db.query<{ flow_key: string; n: number }>(
    `SELECT flow_key, count(*) AS n FROM hookrun.handler_deliveries WHERE handler = $1 AND status IN ('pending', 'failed') AND flow_key IS NOT NULL
     GROUP BY flow_key ORDER BY n DESC, flow_key LIMIT $2`,
    [handler, limit],
  );
  return rows.map((r) => ({ key: r.flow_key, waiting: Number(r.n) }));
}

/** A handler's control row as operators read it: paused since when, and when a rate limit on the whole handler lets the next one start. */
export interface HandlerControlState {
  handler: string;
  paused: boolean;
  pausedAt: Date | null;
  /** When a rate limit without a key lets the next one start (null: now). */
  nextStartAt: Date | null;
}

/** Every handler's control row (a paused handler may have nothing waiting yet, so the delivery counts alone do not show it). */
export async function handlerControlStates(db: Queryable): Promise<HandlerControlState[]> {
  const rows = await db.query<{ handler: string; paused: boolean; paused_at: Date | string | null; tat: Date | string | null }>(
    `SELECT handler, paused, paused_at, tat FROM hookrun.handler_controls ORDER BY handler`,
  );
  const date = (value: Date | string | null) => (value === null ? null : new Date(value));
  return rows.map((r) => ({ handler: r.handler, paused: r.paused === true, pausedAt: date(r.paused_at), nextStartAt: date(r.tat) }));
}
