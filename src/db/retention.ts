import type { Queryable } from './database.js';

/** Statuses an event never leaves by itself: only these are ever deleted. */
const FINISHED = `('processed', 'ignored', 'dead')`;

/**
 * One slice of the inbox in id order (≈ arrival order, read off the primary
 * key, no extra index on the hot path): its finished events received before
 * the cutoff have their keys saved to webhook_event_keys (unless already too
 * old to be worth deduplicating) and are returned for deletion.
 */
const SAVE_KEYS_SQL = `
  WITH slice AS (
    SELECT id, source, key, status, received_at FROM hookrun.webhook_events
    WHERE id > $1 ORDER BY id LIMIT $2
  ), old AS (
    SELECT * FROM slice WHERE status IN ${FINISHED} AND received_at < $3::timestamptz
  ), saved AS (
    INSERT INTO hookrun.webhook_event_keys (source, key, received_at)
    SELECT source, key, received_at FROM old WHERE received_at >= $4::timestamptz
    ON CONFLICT DO NOTHING
    RETURNING 1
  )
  SELECT (SELECT max(id) FROM slice) AS last_id,
         (SELECT min(received_at) FROM slice) AS first_received_at,
         (SELECT coalesce(array_agg(id), '{}') FROM old) AS ids,
         (SELECT count(*) FROM saved) AS saved`;

/**
 * Delete the given events if they are still finished (a replay in between
 * keeps its event), and their search keys (found by the BRIN range of their ids).
 */
const DELETE_EVENTS_SQL = `
  WITH gone AS (DELETE FROM hookrun.webhook_events WHERE id = ANY($1::bigint[]) AND status IN ${FINISHED} RETURNING id),
  unsearchable AS (DELETE FROM hookrun.event_search s WHERE s.event_id = ANY(ARRAY(SELECT id FROM gone)))
  SELECT count(*) AS n FROM gone`;

const EXPIRE_KEYS_SQL = `
  DELETE FROM hookrun.webhook_event_keys WHERE (source, key) IN (
    SELECT source, key FROM hookrun.webhook_event_keys WHERE received_at < $1::timestamptz LIMIT $2
  )`;

const TRIM_CRON_RUNS_SQL = `
  DELETE FROM hookrun.cron_runs WHERE id IN (
    SELECT id FROM hookrun.cron_runs WHERE started_at < $1::timestamptz AND status <> 'running' ORDER BY id LIMIT $2
  )`;

/** One slice's result: where the next slice starts, whether it reached recent events, what to delete. */
export interface SavedSlice {
  lastId: number | undefined;
  firstReceivedAt: Date | undefined;
  ids: number[];
  savedKeys: number;
}

/** Save the keys of one slice's old finished events; see SAVE_KEYS_SQL. */
export async function saveKeysOfOldEvents(db: Queryable, options: { afterId: number; limit: number; before: Date; keepKeysFrom: Date }): Promise<SavedSlice> {
  const [row] = await db.query<{ last_id: number | null; first_received_at: Date | string | null; ids: Array<number | string>; saved: number | string }>(
    SAVE_KEYS_SQL,
    [options.afterId, options.limit, options.before.toISOString(), options.keepKeysFrom.toISOString()],
  );
  return {
    lastId: row?.last_id == null ? undefined : Number(row.last_id),
    firstReceivedAt: row?.first_received_at ? new Date(row.first_received_at) : undefined,
    ids: (row?.ids ?? []).map(Number),
    savedKeys: Number(row?.saved ?? 0),
  };
}

/** Delete events whose keys are saved; returns how many went. */
export async function deleteEvents(db: Queryable, ids: number[]): Promise<number> {
  if (ids.length === 0) return 0;
  const rows = await db.query<{ n: number }>(DELETE_EVENTS_SQL, [ids]);
  return Number(rows[0]?.n ?? 0);
}

/** Forget up to `limit` saved keys received before `before`; returns how many. */
export async function expireEventKeys(db: Queryable, before: Date, limit: number): Promise<number> {
  const rows = await db.query<{ n: number }>(`WITH gone AS (${EXPIRE_KEYS_SQL} RETURNING 1) SELECT count(*) AS n FROM gone`, [before.toISOString(), limit]);
  return Number(rows[0]?.n ?? 0);
}

/** Delete up to `limit` finished cron runs started before `before`; returns how many. */
export async function trimCronRuns(db: Queryable, before: Date, limit: number): Promise<number> {
  const rows = await db.query<{ n: number }>(`WITH gone AS (${TRIM_CRON_RUNS_SQL} RETURNING 1) SELECT count(*) AS n FROM gone`, [before.toISOString(), limit]);
  return Number(rows[0]?.n ?? 0);
}

/** What a prune would delete now (the dry run): full counts, so only for the CLI and the admin API. */
export async function countPrunable(
  db: Queryable,
  cutoffs: { events?: Date; keys?: Date; cronRuns?: Date; audit?: Date },
): Promise<{ events: number; dedupeKeys: number; cronRuns: number; auditEntries: number }> {
  const count = async (sql: string, cutoff: Date | undefined) => (cutoff ? Number((await db.query<{ n: number }>(sql, [cutoff.toISOString()]))[0]?.n ?? 0) : 0);
  return {
    events: await count(`SELECT count(*) AS n FROM hookrun.webhook_events WHERE status IN ${FINISHED} AND received_at < $1::timestamptz`, cutoffs.events),
    dedupeKeys: await count(`SELECT count(*) AS n FROM hookrun.webhook_event_keys WHERE received_at < $1::timestamptz`, cutoffs.keys),
    cronRuns: await count(`SELECT count(*) AS n FROM hookrun.cron_runs WHERE started_at < $1::timestamptz AND status <> 'running'`, cutoffs.cronRuns),
    auditEntries: await count(`SELECT count(*) AS n FROM hookrun.audit_entries WHERE at < $1::timestamptz`, cutoffs.audit),
  };
}

/** The on-disk size (table, indexes, TOAST) of the tables retention bounds, for /metrics. */
export async function retainedTableBytes(db: Queryable): Promise<Record<string, number>> {
  // Each table is named as an identifier (its row type), not a 'name'::regclass string, so the schema qualifier stays SQL, not text.
  const rows = await db.query<{ name: string; bytes: number | string }>(
    `SELECT t.name, pg_total_relation_size(p.typrelid) AS bytes
     FROM (VALUES ('webhook_events', pg_typeof(NULL::hookrun.webhook_events)), ('webhook_event_keys', pg_typeof(NULL::hookrun.webhook_event_keys)),
                  ('cron_runs', pg_typeof(NULL::hookrun.cron_runs))) AS t(name, type)
     JOIN pg_type p ON p.oid = t.type`,
  );
  return Object.fromEntries(rows.map((row) => [row.name, Number(row.bytes)]));
}
