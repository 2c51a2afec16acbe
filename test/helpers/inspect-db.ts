import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';

/** Run read-only checks against the database a spawned hookrun used, after it has stopped (embedded) or while it runs (PostgreSQL). */
export async function withDatabase<T>(
  target: { dataDir?: string; url?: string },
  fn: (query: <R = Record<string, unknown>>(sql: string, params?: unknown[]) => Promise<R[]>) => Promise<T>,
): Promise<T> {
  if (target.url) {
    const client = new pg.Client({ connectionString: target.url });
    await client.connect();
    try {
      return await fn(async <R>(sql: string, params?: unknown[]) => (await client.query(sql, params)).rows as R[]);
    } finally {
      await client.end();
    }
  }
  const pglite = new PGlite(join(target.dataDir!, 'pgdata'));
  await pglite.waitReady;
  try {
    return await fn(async <R>(sql: string, params?: unknown[]) => (await pglite.query<R>(sql, params)).rows);
  } finally {
    await pglite.close();
  }
}

/** Counts that prove "nothing lost, nothing twice" for the inbox. */
export interface InboxCounts {
  rows: number;
  distinctKeys: number;
  byStatus: Record<string, number>;
  maxAttempts: number;
  reclaimed: number;
  /** Deliveries a worker holds now (claimed, running). */
  running: number;
}

/** Row and key counts of `webhook_events`, by status, with attempt figures and the deliveries running. */
export async function inboxCounts(query: <R = Record<string, unknown>>(sql: string, params?: unknown[]) => Promise<R[]>): Promise<InboxCounts> {
  const [totals] = await query<{ rows: number; keys: number; max_attempts: number; reclaimed: number }>(
    `SELECT count(*)::int AS rows, count(DISTINCT (source, key))::int AS keys,
            coalesce(max(attempts), 0)::int AS max_attempts, count(*) FILTER (WHERE attempts > 1)::int AS reclaimed
       FROM hookrun.webhook_events`,
  );
  const statuses = await query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM hookrun.webhook_events GROUP BY status');
  const [held] = await query<{ n: number }>(`SELECT count(*)::int AS n FROM hookrun.handler_deliveries WHERE status = 'running'`);
  return {
    running: held!.n,
    rows: totals!.rows,
    distinctKeys: totals!.keys,
    maxAttempts: totals!.max_attempts,
    reclaimed: totals!.reclaimed,
    byStatus: Object.fromEntries(statuses.map((s) => [s.status, s.n])),
  };
}

type Query = <R = Record<string, unknown>>(sql: string, params?: unknown[]) => Promise<R[]>;

/**
 * Count handler side effects, not rows: a trigger logs every INSERT into the
 * mirror tables and every UPDATE that actually changes a row. A handler that
 * runs again after a crash and rewrites the same state leaves no extra entry;
 * one that changes state twice does.
 */
export async function installEffectCounter(query: Query): Promise<void> {
  await query(`CREATE TABLE IF NOT EXISTS reliability_effects (tbl text NOT NULL, id text NOT NULL, op text NOT NULL)`);
  await query(`CREATE OR REPLACE FUNCTION reliability_log_effect() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN INSERT INTO reliability_effects VALUES (TG_TABLE_NAME, NEW.id, TG_OP); RETURN NEW; END $$`);
  for (const table of ['users', 'customers']) {
    await query(`DROP TRIGGER IF EXISTS reliability_insert ON hookrun.${table}`);
    await query(`DROP TRIGGER IF EXISTS reliability_update ON hookrun.${table}`);
    await query(`CREATE TRIGGER reliability_insert AFTER INSERT ON hookrun.${table} FOR EACH ROW EXECUTE FUNCTION reliability_log_effect()`);
    await query(
      `CREATE TRIGGER reliability_update AFTER UPDATE ON hookrun.${table} FOR EACH ROW WHEN (OLD.* IS DISTINCT FROM NEW.*) EXECUTE FUNCTION reliability_log_effect()`,
    );
  }
}

/** Side effects logged by `installEffectCounter` for ids starting with `prefix`. */
export async function effectCounts(query: Query, table: string, prefix: string): Promise<{ ids: number; effects: number; maxPerId: number }> {
  const [row] = await query<{ ids: number; effects: number; max_per_id: number }>(
    `SELECT count(DISTINCT id)::int AS ids, count(*)::int AS effects, coalesce(max(n), 0)::int AS max_per_id
       FROM (SELECT id, count(*) OVER (PARTITION BY id) AS n FROM reliability_effects WHERE tbl = $1 AND id LIKE $2) t`,
    [table, `${prefix}%`],
  );
  return { ids: row!.ids, effects: row!.effects, maxPerId: row!.max_per_id };
}

/** Count every row ever inserted into `pages` (keep-alive inserts one per run and deletes it), via a trigger. */
export async function installPageInsertCounter(query: Query): Promise<void> {
  await query('CREATE TABLE reliability_page_inserts (at timestamptz NOT NULL DEFAULT clock_timestamp())');
  await query(`CREATE OR REPLACE FUNCTION reliability_log_page() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN INSERT INTO reliability_page_inserts DEFAULT VALUES; RETURN NEW; END $$`);
  await query('CREATE TRIGGER reliability_page_insert AFTER INSERT ON hookrun.pages FOR EACH ROW EXECUTE FUNCTION reliability_log_page()');
}
