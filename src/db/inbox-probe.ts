import type { Database } from './database.js';

const PROBE_ROLLBACK = new Error('readiness probe: rolled back on purpose');

/**
 * What `/ready` asks: would an inbox insert commit now? In a transaction it
 * takes the lock an INSERT takes on `webhook_events` (waiting at most
 * `lockTimeoutMs`) and reads whether the transaction may write, then rolls
 * back: a locked inbox or a read-only database fails it where `SELECT 1`
 * passes, and nothing is written (no row, no dead tuple: PGlite has no
 * autovacuum to clean up after a probe a second).
 */
export async function probeInboxInsert(db: Database, lockTimeoutMs: number): Promise<void> {
  try {
    await db.transaction(async (tx) => {
      await tx.query(`SELECT set_config('lock_timeout', $1, true)`, [`${lockTimeoutMs}ms`]);
      await tx.query('LOCK TABLE hookrun.webhook_events IN ROW EXCLUSIVE MODE');
      const [row] = await tx.query<{ readOnly: string }>(`SELECT current_setting('transaction_read_only') AS "readOnly"`);
      if (row?.readOnly === 'on') throw new Error('the database is read-only');
      throw PROBE_ROLLBACK;
    });
  } catch (error) {
    if (error !== PROBE_ROLLBACK) throw error;
  }
}
