import { describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { EventWriter } from '../../src/db/event-writer.js';
import { retainedTableBytes } from '../../src/db/retention.js';
import { prune } from '../../src/retention/prune.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';

const DAY = 86_400_000;
const DAYS = { events: 30, dedupeKeys: 90, cronRuns: 90 };

/** The same database with no wait between saving keys and deleting (the wait is PostgreSQL's statement_timeout, 11 s). */
const withoutSettleWait = (db: Database): Database => ({ ...db, tuning: { ...db.tuning, longestStatementMs: 0 } });

async function store(db: Database, key: string, status: string, ageDays: number): Promise<number> {
  const { id } = await new EventWriter(db).write({ source: 'payments', key, type: 'invoice.paid', payloadJson: '{"id":"evt"}' });
  await db.query(`UPDATE hookrun.webhook_events SET status = $2, received_at = now() - make_interval(days => $3) WHERE id = $1`, [id, status, ageDays]);
  return id;
}

const keysOf = async (db: Database, table: string) => (await db.query<{ key: string }>(`SELECT key FROM hookrun.${table} ORDER BY key`)).map((r) => r.key);

describe.each(databaseKinds())('retention on $name', (kind) => {
  const testDb = useTestDatabase(kind);

  it('deletes finished events past EVENT_RETENTION_DAYS, keeps unfinished and recent ones, and keeps their keys so a late retry is a duplicate', async () => {
    const db = withoutSettleWait(testDb.db);
    await store(db, 'old_processed', 'processed', 31);
    await store(db, 'old_ignored', 'ignored', 40);
    await store(db, 'old_dead', 'dead', 35);
    await store(db, 'old_failed', 'failed', 60);
    await store(db, 'old_pending', 'pending', 45);
    await store(db, 'recent_processed', 'processed', 29);

    const dry = await prune(db, DAYS, Date.now(), { dryRun: true });
    expect(dry).toMatchObject({ dryRun: true, events: 3, dedupeKeys: 0, cronRuns: 0 });
    expect(await keysOf(db, 'webhook_events')).toHaveLength(6); // a dry run deletes nothing

    const deleted: Record<string, number> = {};
    const report = await prune(db, DAYS, Date.now(), { onDeleted: (table, n) => (deleted[table] = (deleted[table] ?? 0) + n) });
    expect(report).toMatchObject({ dryRun: false, events: 3 });
    expect(deleted.webhook_events).toBe(3);
    expect(await keysOf(db, 'webhook_events')).toEqual(['old_failed', 'old_pending', 'recent_processed']);
    expect(await keysOf(db, 'webhook_event_keys')).toEqual(['old_dead', 'old_ignored', 'old_processed']);

    // A provider's late retry of a deleted event: answered duplicate, not stored again.
    const retry = await new EventWriter(db).write({ source: 'payments', key: 'old_processed', type: 'invoice.paid', payloadJson: '{"id":"evt"}' });
    expect(retry.duplicate).toBe(true);
    expect(await keysOf(db, 'webhook_events')).toHaveLength(3);
    // The same key from another source is another event.
    expect((await new EventWriter(db).write({ source: 'auth', key: 'old_processed', type: 'user.created', payloadJson: '{}' })).duplicate).toBe(false);
    expect(await prune(db, DAYS, Date.now())).toMatchObject({ events: 0 }); // a second pass finds nothing more
  });

  it('forgets keys after DEDUPE_RETENTION_DAYS: then the key is new again', async () => {
    const db = withoutSettleWait(testDb.db);
    await store(db, 'evt_a', 'processed', 31);
    await store(db, 'evt_b', 'processed', 100); // past both: deleted without saving its key
    expect(await prune(db, DAYS, Date.now())).toMatchObject({ events: 2, dedupeKeys: 0 });
    expect(await keysOf(db, 'webhook_event_keys')).toEqual(['evt_a']);
    expect(await prune(db, DAYS, Date.now() + 60 * DAY, { dryRun: true })).toMatchObject({ dedupeKeys: 1 });
    expect(await prune(db, DAYS, Date.now() + 60 * DAY)).toMatchObject({ dedupeKeys: 1 });
    expect(await keysOf(db, 'webhook_event_keys')).toEqual([]);
    expect((await new EventWriter(db).write({ source: 'payments', key: 'evt_a', type: 'invoice.paid', payloadJson: '{}' })).duplicate).toBe(false);
  });

  it('trims finished cron runs past CRON_RUN_RETENTION_DAYS, never a running one; 0 days keeps everything', async () => {
    const db = withoutSettleWait(testDb.db);
    const run = (startedDaysAgo: number, status: string) =>
      db.query(`INSERT INTO hookrun.cron_runs (job, trigger, started_at, status) VALUES ('nightly', 'schedule', now() - make_interval(days => $1), $2)`, [
        startedDaysAgo,
        status,
      ]);
    await run(91, 'succeeded');
    await run(120, 'failed');
    await run(100, 'running');
    await run(10, 'succeeded');
    expect(await prune(db, { events: 0, dedupeKeys: 0, cronRuns: 0 }, Date.now())).toMatchObject({ events: 0, dedupeKeys: 0, cronRuns: 0, cutoffs: {} });
    expect(await prune(db, DAYS, Date.now())).toMatchObject({ cronRuns: 2 });
    expect((await db.query<{ status: string }>(`SELECT status FROM hookrun.cron_runs ORDER BY started_at`)).map((r) => r.status)).toEqual([
      'running',
      'succeeded',
    ]);
  });

  it('deletes a backlog larger than one chunk, and the inbox shrinks on disk', async () => {
    const db = withoutSettleWait(testDb.db);
    await db.query(
      `INSERT INTO hookrun.webhook_events (source, key, type, payload, status, received_at)
       SELECT 'payments', 'bulk_' || g, 'invoice.paid', '{"id":"evt"}'::jsonb, 'processed', now() - interval '40 days' FROM generate_series(1, 2500) g`,
    );
    await store(db, 'fresh', 'pending', 0);
    expect(await prune(db, DAYS, Date.now())).toMatchObject({ events: 2500 });
    expect(await keysOf(db, 'webhook_events')).toEqual(['fresh']);
    expect((await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM hookrun.webhook_event_keys`))[0]!.n).toBe(2500);
    const bytes = await retainedTableBytes(db);
    expect(Object.keys(bytes).sort()).toEqual(['cron_runs', 'webhook_event_keys', 'webhook_events']);
    expect(bytes.webhook_events).toBeGreaterThan(0);
  });
});
