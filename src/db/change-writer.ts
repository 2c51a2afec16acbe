import type { Database } from './database.js';

/** One committed row change read from the write-ahead log, ready for the inbox (source `database`). */
export interface CapturedChange {
  /** Stable across re-reads of the WAL: the same change is always the same key. */
  key: string;
  type: 'INSERT' | 'UPDATE' | 'DELETE';
  payloadJson: string;
  /** `schema.table:<primary key>`: the worker runs one row's changes one at a time, in id order. */
  orderKey: string;
}

/** The inbox source of captured changes: the same handlers serve them and Supabase's Database Webhooks. */
export const CHANGE_SOURCE = 'database';

const MAX_ROWS_PER_STATEMENT = 500;

// Rows go in the order given (ORDER BY the position), so ids follow commit order; a key seen before, or
// one retention moved to webhook_event_keys, is skipped: a transaction read twice is stored once.
function insertSql(rows: number): string {
  const values: string[] = new Array(rows);
  for (let i = 0, p = 1; i < rows; i++, p += 4) values[i] = `(${i}, $${p}::text, $${p + 1}::text, $${p + 2}::jsonb, $${p + 3}::text)`;
  return `INSERT INTO hookrun.webhook_events (source, key, type, payload, order_key)
    SELECT '${CHANGE_SOURCE}', v.k, v.t, v.p, v.o FROM (VALUES ${values.join(', ')}) AS v(n, k, t, p, o)
    WHERE NOT EXISTS (SELECT 1 FROM hookrun.webhook_event_keys d WHERE d.source = '${CHANGE_SOURCE}' AND d.key = v.k)
    ORDER BY v.n
    ON CONFLICT (source, key) DO NOTHING
    RETURNING id, pg_notify('hookrun_events', '')`;
}

/**
 * Store captured changes in one transaction, in order. Returns how many were
 * new (the rest were stored by an earlier read of the same WAL). The capture
 * confirms its position to the product's database only after this commits.
 */
export async function storeChanges(db: Database, changes: readonly CapturedChange[]): Promise<number> {
  if (changes.length === 0) return 0;
  return db.transaction(async (tx) => {
    let stored = 0;
    for (let start = 0; start < changes.length; start += MAX_ROWS_PER_STATEMENT) {
      const chunk = changes.slice(start, start + MAX_ROWS_PER_STATEMENT);
      const params: string[] = [];
      for (const change of chunk) params.push(change.key, change.type, change.payloadJson, change.orderKey);
      stored += (await tx.query(insertSql(chunk.length), params)).length;
    }
    return stored;
  });
}
