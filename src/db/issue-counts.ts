import type { Queryable } from './database.js';

/** Issues by status (open, acknowledged, resolved), for the overview's summary; a status with none is absent. */
export async function countIssuesByStatus(db: Queryable): Promise<Record<string, number>> {
  const rows = await db.query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM hookrun.issues GROUP BY status');
  return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
}
