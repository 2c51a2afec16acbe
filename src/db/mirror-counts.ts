import type { Queryable } from './database.js';
import { MIRROR_TABLES, type MirrorTable } from './mirror-read.js';

/** Rows in each mirror table, for the console's mirrors index (table names from MIRROR_TABLES, never from a caller). */
export async function countMirrorRows(db: Queryable): Promise<Record<MirrorTable, number>> {
  const tables = Object.keys(MIRROR_TABLES) as MirrorTable[];
  const [row] = await db.query<Record<string, number>>(`SELECT ${tables.map((t) => `(SELECT count(*)::int FROM hookrun.${t}) AS ${t}`).join(', ')}`);
  return Object.fromEntries(tables.map((t) => [t, Number(row?.[t] ?? 0)])) as Record<MirrorTable, number>;
}
