import type { Database } from './database.js';
import { searchKeysOf } from './search-keys.js';

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
  for (let i = 0, p = 1; i < rows; i++, p += 5) values[i] = `(${i}, $${p}::text, $${p + 1}::text, $${p + 2}::json, $${p + 3}::text, $${p + 4}::text[])`;
  return `WITH v(n, k, t, p, o, q) AS (VALUES ${values.join(', ')}),
  stored AS (
    INSERT INTO hookrun.webhook_events (source, key, type, payload, order_key)
    SELECT '${CHANGE_SOURCE}', v.k, v.t, v.p, v.o FROM v
    WHERE NOT EXISTS (SELECT 1 FROM hookrun.webhook_event_keys d WHERE d.source = '${CHANGE_SOURCE}' AND d.key = v.k)
    ORDER BY v.n
    ON CONFLICT (source, key) DO NOTHING
    RETURNING id, key
  ), queued AS (
    INSERT INTO hookrun.new_events (event_id) SELECT id FROM stored
  ), searchable AS (
    INSERT INTO hookrun.event_search (value, event_id) SELECT q.value, stored.id FROM stored JOIN v ON v.k = stored.key CROSS JOIN unnest(v.q) AS q(value)
  )
  SELECT id, pg_notify('hookrun_events', '') FROM stored`;
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
      const params: Array<string | string[]> = [];
      for (const change of chunk) params.push(change.key, change.type, change.payloadJson, change.orderKey, searchKeysOf(change.payloadJson));
      stored += (await tx.query(insertSql(chunk.length), params)).length;
    }
    return stored;
  });
}
