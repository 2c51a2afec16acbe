import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/client.js';
import type { Database } from '../../src/db/database.js';
import { EventWriter } from '../../src/db/event-writer.js';
import { isPlannedOnce, plannedOnce, StatementNames } from '../../src/db/statement-names.js';
import { createPostgresDatabase, type TestDatabase } from '../helpers/db.js';
import { PGBOUNCER, startPgBouncer, type Pooler } from '../helpers/pgbouncer.js';
import { drain, testWorker } from '../inbox/fixtures.js';

describe('statement names (DATABASE_PREPARED_STATEMENTS=on)', () => {
  it('names each text once, the same name every time, and at most `limit` texts', () => {
    const names = new StatementNames(2);
    const a = names.nameOf('SELECT $1');
    expect(a).toMatch(/^hookrun_[0-9a-f]{24}$/);
    expect(names.nameOf('SELECT $1')).toBe(a);
    expect(names.nameOf('SELECT $1, $2')).not.toBe(a);
    expect(names.nameOf('SELECT $1, $2, $3')).toBeUndefined(); // past the limit: runs unnamed
  });

  it('prepares only the statements marked as planned once', () => {
    const marked = plannedOnce('SELECT $1::int AS marked');
    expect(marked).toBe('SELECT $1::int AS marked');
    expect(isPlannedOnce(marked)).toBe(true);
    expect(isPlannedOnce('SELECT $1::int AS unmarked')).toBe(false);
  });
});

describe.skipIf(!process.env.TEST_DATABASE_URL)('prepared statements on PostgreSQL', () => {
  let test: TestDatabase;
  let db: Database;

  beforeAll(async () => {
    test = await createPostgresDatabase();
    db = await openDatabase({ databaseUrl: test.url, namedStatements: true, poolSize: 1 }); // one connection: its prepared statements are visible
  });
  afterAll(async () => {
    await db?.close();
    await test?.close();
  });

  it('stores and processes events with the ingest, claim and settle statements prepared once on the connection', async () => {
    const writer = new EventWriter(db);
    for (const size of [1, 3, 40, 3]) {
      const stored = await Promise.all(
        Array.from({ length: size }, (_, i) =>
          writer.write({
            source: 'database',
            key: `k_${size}_${i}_${Math.random()}`,
            type: 'INSERT',
            payloadJson: JSON.stringify({ type: 'INSERT', table: 'orders', schema: 'public', record: { id: i }, old_record: null }),
          }),
        ),
      );
      expect(stored.every((s) => !s.duplicate && s.id > 0)).toBe(true);
    }
    await drain(testWorker(db).worker);
    const statuses = await db.query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM hookrun.webhook_events GROUP BY status');
    expect(statuses).toEqual([{ status: 'processed', n: 47 }]);
    const prepared = await db.query<{ statement: string }>("SELECT statement FROM pg_prepared_statements WHERE name LIKE 'hookrun_%'");
    // The ingest statement stores the events and their requests (event-insert-sql.ts).
    const isIngest = (p: { statement: string }) => p.statement.includes('INSERT INTO hookrun.webhook_events') && p.statement.includes('hookrun.event_requests');
    expect(prepared.some(isIngest)).toBe(true);
    expect(prepared.some((p) => p.statement.includes('INSERT INTO hookrun.handler_deliveries'))).toBe(true); // the claim's deliveries
    expect(prepared.some((p) => p.statement.includes('UPDATE hookrun.handler_deliveries d') && p.statement.includes('event_attempts'))).toBe(true); // the settle
    // The queue's take (LIMIT $1 … SKIP LOCKED) is planned on every run: a generic plan made on a small queue read the
    // whole event table on every claim once it had grown.
    expect(prepared.some((p) => p.statement.includes('DELETE FROM hookrun.new_events'))).toBe(false);
    await db.query('SELECT $1::int AS unmarked', [1]);
    const unmarked = await db.query("SELECT 1 FROM pg_prepared_statements WHERE statement LIKE '%AS unmarked%' AND name LIKE 'hookrun_%'");
    expect(unmarked).toEqual([]);
    // Ingest sizes 1, 3, 40 and 3 again: padded to 1, 4 and 64 slots, three statements, not four.
    expect(prepared.filter(isIngest).length).toBe(3);
  });
});

describe.skipIf(!process.env.TEST_DATABASE_URL || !PGBOUNCER)('prepared statements behind a transaction pooler nothing declared', () => {
  let test: TestDatabase;
  let pooler: Pooler;

  beforeAll(async () => {
    test = await createPostgresDatabase();
    // As Supavisor does: it takes the settings hookrun sends at connect, so start-up cannot tell it is there.
    pooler = await startPgBouncer('transaction', process.env.TEST_DATABASE_URL!, { ignoreStartupParameters: ['statement_timeout', 'lock_timeout'] });
  });
  afterAll(async () => {
    await pooler?.stop();
    await test?.close();
  });

  it('a prepared name already on (or missing from) the server connection turns prepared statements off: the statement runs again unnamed, nothing fails', async () => {
    const sql = plannedOnce('SELECT $1::int AS behind_the_pooler');
    // Another instance behind the same pooler prepares the statement on the one server connection in use
    // (its pool's next transaction may be handed any other).
    const other = await openDatabase({ databaseUrl: pooler.through(test.url!), namedStatements: true, poolSize: 1 });
    const refused: Error[] = [];
    const db = await openDatabase({ databaseUrl: pooler.through(test.url!), namedStatements: true, poolSize: 2, onPreparedRefused: (e) => refused.push(e) });
    try {
      expect(await other.query(sql, [0])).toEqual([{ behind_the_pooler: 0 }]);
      const answers: unknown[] = [];
      for (let i = 1; i <= 12; i++) answers.push(await db.query(sql, [i]));
      expect(answers).toEqual(Array.from({ length: 12 }, (_, i) => [{ behind_the_pooler: i + 1 }]));
      expect(refused.map((e) => (e as Error & { code?: string }).code)).toEqual([expect.stringMatching(/^(26000|42P05)$/)]);
      // The inbox through the same pool afterwards: stored and processed, nothing prepared any more.
      const writer = new EventWriter(db);
      const stored = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          writer.write({
            source: 'database',
            key: `pooled_${i}_${Math.random()}`,
            type: 'INSERT',
            payloadJson: JSON.stringify({ type: 'INSERT', table: 'orders', schema: 'public', record: { id: i }, old_record: null }),
          }),
        ),
      );
      expect(stored.every((s) => !s.duplicate && s.id > 0)).toBe(true);
      await drain(testWorker(db).worker);
      expect(await db.query('SELECT status, count(*)::int AS n FROM hookrun.webhook_events GROUP BY status')).toEqual([{ status: 'processed', n: 20 }]);
      expect(refused).toHaveLength(1);
    } finally {
      await db.close();
      await other.close();
    }
  });
});
