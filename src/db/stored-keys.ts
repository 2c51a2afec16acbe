import type { Queryable } from './database.js';

/**
 * Which of `keys` the inbox holds for `source`: an event row, or a key
 * retention kept after deleting the event (`webhook_event_keys`), which the
 * receiver would answer `duplicate` too. For a reconcile that asks the sender
 * to send again (GitHub) rather than storing what it lists.
 */
export async function storedKeys(db: Queryable, source: string, keys: readonly string[]): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const rows = await db.query<{ key: string }>(
    `SELECT key FROM hookrun.webhook_events WHERE source = $1 AND key = ANY($2::text[])
     UNION SELECT key FROM hookrun.webhook_event_keys WHERE source = $1 AND key = ANY($2::text[])`,
    [source, keys],
  );
  return new Set(rows.map((r) => r.key));
}
