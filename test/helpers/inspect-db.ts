import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';

/** Run read-only checks against the database a spawned hookrun used, after it has stopped (embedded) or while it runs (PostgreSQL). */
export async function withDatabase<T>(target: { dataDir?: string; url?: string }, fn: (query: <R = Record<string, unknown>>(sql: string, params?: unknown[]) => Promise<R[]>) => Promise<T>): Promise<T> {
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
}

/** Row and key counts of `webhook_events`, by status, with attempt figures. */
export async function inboxCounts(query: <R = Record<string, unknown>>(sql: string, params?: unknown[]) => Promise<R[]>): Promise<InboxCounts> {
  const [totals] = await query<{ rows: number; keys: number; max_attempts: number; reclaimed: number }>(
    `SELECT count(*)::int AS rows, count(DISTINCT (source, key))::int AS keys,
            coalesce(max(attempts), 0)::int AS max_attempts, count(*) FILTER (WHERE attempts > 1)::int AS reclaimed
       FROM webhook_events`,
  );
  const statuses = await query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM webhook_events GROUP BY status');
  return {
    rows: totals!.rows,
    distinctKeys: totals!.keys,
    maxAttempts: totals!.max_attempts,
    reclaimed: totals!.reclaimed,
    byStatus: Object.fromEntries(statuses.map((s) => [s.status, s.n])),
  };
}
