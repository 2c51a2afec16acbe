import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changesClusterAvailable, createSourceDatabase, type SourceDatabase } from '../helpers/changes-source.js';
import { createPostgresDatabase, type TestDatabase } from '../helpers/db.js';
import { reportFigures } from '../helpers/figures.js';
import { assertNoSecretLeaks } from '../helpers/secret-scan.js';
import { pollUntil, runCli, spawnHookrun, type HookrunProcess } from '../helpers/spawn-hookrun.js';

const available = (await changesClusterAvailable()) && Boolean(process.env.TEST_DATABASE_URL);

type Query = <R = Record<string, unknown>>(sql: string, params?: unknown[]) => Promise<R[]>;

interface ChangeRow {
  id: number;
  type: string;
  status: string;
  order_key: string;
  payload: { record: Record<string, unknown> | null; old_record: Record<string, unknown> | null; commit_lsn: string };
  attempts_recorded: number;
  processed: number;
  first_started: Date | null;
}

const accountInserts = (from: number, count: number): Array<[string, unknown[]]> =>
  Array.from({ length: count }, (_, i) => ['INSERT INTO accounts (id, balance, note) VALUES ($1, 0, $2)', [from + i, `account ${from + i}`]]);

// The capture crash test: 2,000 inserts in 20 transactions, 500 updates, 100 deletes, hookrun killed with -9 while it
// captures and restarted; then hookrun stopped while writes go on. Every committed change exactly once, in order per row.
describe.skipIf(!available)('database changes captured from the WAL, through kill -9 and downtime', () => {
  let hookrunDb: TestDatabase;
  let source: SourceDatabase;
  let query: Query;
  const started: HookrunProcess[] = [];
  const captureState = async (proc: HookrunProcess) => ((await (await fetch(`${proc.url}/ready`)).json()) as { changes?: { state: string } }).changes?.state;
  const spawn = async (state = 'consuming') => {
    const proc = await spawnHookrun({ databaseUrl: hookrunDb.url!, env: { ...source.env, LEASE_SECONDS: '2' } });
    started.push(proc);
    await pollUntil(`the capture ${state}`, 15_000, async () => ((await captureState(proc)) === state ? true : undefined));
    return proc;
  };
  const changes = async () =>
    (
      await query<ChangeRow>(
        `SELECT e.id, e.type, e.status, e.order_key, e.payload,
              (SELECT count(*)::int FROM hookrun.event_attempts a WHERE a.event_id = e.id)
                + (SELECT count(*)::int FROM hookrun.handler_deliveries d WHERE d.event_id = e.id AND d.status = 'processed') AS attempts_recorded,
              (SELECT count(*)::int FROM hookrun.handler_deliveries d WHERE d.event_id = e.id AND d.status = 'processed') AS processed,
              (SELECT min(s.started_at) FROM (SELECT a.started_at FROM hookrun.event_attempts a WHERE a.event_id = e.id
                 UNION ALL SELECT d.started_at FROM hookrun.handler_deliveries d WHERE d.event_id = e.id) s) AS first_started
       FROM hookrun.webhook_events e WHERE e.source = 'database' ORDER BY e.id`,
      )
    ).map((r) => ({ ...r, id: Number(r.id) }));
  const processedCount = async () =>
    Number((await query<{ n: string }>(`SELECT count(*) AS n FROM hookrun.webhook_events WHERE source = 'database' AND status = 'processed'`))[0]!.n);

  beforeAll(async () => {
    hookrunDb = await createPostgresDatabase();
    query = (sql, params) => hookrunDb.db.query(sql, params);
    source = await createSourceDatabase('CREATE TABLE accounts (id int PRIMARY KEY, balance int NOT NULL, note text)', ['accounts']);
  });
  afterAll(async () => {
    for (const proc of started) await proc.stop(5_000);
    await source?.close();
    await hookrunDb?.close();
    assertNoSecretLeaks();
  });

  it(
    'stores exactly 2,600 events for 2,600 committed changes after kill -9 mid-capture, each processed once and in order per row',
    { timeout: 180_000 },
    async () => {
      const first = await spawn();
      const writes: Array<Array<[string, unknown[]]>> = [
        ...Array.from({ length: 20 }, (_, t) => accountInserts(t * 100 + 1, 100)),
        ...Array.from(
          { length: 10 },
          (_, t) =>
            [["UPDATE accounts SET balance = balance + 1, note = 'updated' WHERE id BETWEEN $1 AND $2", [t * 50 + 1, t * 50 + 50]]] as Array<
              [string, unknown[]]
            >,
        ),
        [['DELETE FROM accounts WHERE id > 1950', []]],
        [['DELETE FROM accounts WHERE id BETWEEN 1901 AND 1950', []]],
      ];
      let killedAt = -1;
      for (const [i, statements] of writes.entries()) {
        await source.transaction(statements);
        // Kill once the capture is under way: some changes stored, the rest of this very stream still coming.
        if (
          killedAt < 0 &&
          i >= 8 &&
          Number((await query<{ n: string }>(`SELECT count(*) AS n FROM hookrun.webhook_events WHERE source = 'database'`))[0]!.n) > 0
        ) {
          first.kill('SIGKILL');
          expect(await first.waitForExit(10_000)).toMatchObject({ signal: 'SIGKILL' });
          killedAt = i;
        }
      }
      expect(killedAt).toBeGreaterThan(0);
      const storedWhenKilled = (await changes()).length;
      expect(storedWhenKilled).toBeLessThan(2_600); // the rest were committed while hookrun was dead

      const second = await spawn();
      await pollUntil('2,600 changes processed', 90_000, async () => ((await processedCount()) >= 2_600 ? true : undefined));
      const rows = await changes();
      expect(rows.length).toBe(2_600);
      expect(rows.filter((r) => r.status !== 'processed')).toEqual([]);
      expect(rows.map((r) => r.type).sort()).toEqual([...Array(2_000).fill('INSERT'), ...Array(100).fill('DELETE'), ...Array(500).fill('UPDATE')].sort());
      // Every handler ran once: one attempt per event, processed (a processed attempt is read off its delivery, the others off
      // event_attempts; a batch killed mid-way rolled back with its outcome).
      expect(rows.filter((r) => r.attempts_recorded !== 1 || r.processed !== 1)).toEqual([]);

      // Per row: commit order, handled in that order, and the last event is the row's final state.
      const finalRows = new Map(
        (await source.query<{ id: number; balance: number; note: string }>('SELECT id, balance, note FROM accounts')).map((r) => [r.id, r]),
      );
      expect(finalRows.size).toBe(1_900);
      const byRow = new Map<string, ChangeRow[]>();
      for (const row of rows) byRow.set(row.order_key, [...(byRow.get(row.order_key) ?? []), row]);
      expect(byRow.size).toBe(2_000);
      for (let id = 1; id <= 2_000; id++) {
        const events = byRow.get(`public.accounts:[${id}]`)!;
        const lsns = events.map((e) => e.payload.commit_lsn);
        expect(lsns, `row ${id}`).toEqual(
          [...lsns].sort((a, b) => (BigInt(`0x${a.replace('/', '').padStart(16, '0')}`) < BigInt(`0x${b.replace('/', '').padStart(16, '0')}`) ? -1 : 1)),
        );
        const starts = events.map((e) => new Date(e.first_started!).getTime());
        expect(starts, `row ${id} handled in order`).toEqual([...starts].sort((a, b) => a - b));
        const last = events.at(-1)!;
        const final = finalRows.get(id);
        if (final) expect(last.payload.record, `row ${id}`).toEqual(final);
        else expect([last.type, last.payload.old_record], `row ${id}`).toEqual(['DELETE', { id }]);
      }

      // Operations: the slot as `hookrun changes status` and /metrics see it; drop-slot refuses while a hookrun streams.
      const status = await runCli(['changes', 'status'], source.env);
      expect(status.code).toBe(0);
      expect(status.stdout).toMatch(new RegExp(`slot +${source.slot}\\nstreaming +yes \\(PID \\d+\\)`));
      expect(status.stdout).toMatch(/publication +hookrun_changes: public\.accounts/);
      const metrics = await (await fetch(`${second.url}/metrics`)).text();
      expect(metrics).toMatch(/^hookrun_changes_connected 1$/m);
      expect(metrics).toMatch(/^hookrun_changes_captured_total \d+$/m);
      expect(metrics).toMatch(/^hookrun_changes_lag_bytes \d+$/m);
      const refused = await runCli(['changes', 'drop-slot'], source.env);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/in use by PID \d+ \(a running hookrun\): stop every hookrun instance/);
      reportFigures('changes kill -9', { storedWhenKilled, committed: 2_600, stored: rows.length, killedAfterTransactions: killedAt + 1 });
    },
  );

  it(
    'captures everything committed while hookrun was stopped, once it starts again; a standby takes over from a killed instance',
    { timeout: 150_000 },
    async () => {
      for (const proc of started) await proc.stop(10_000);
      const before = (await changes()).length;
      for (let t = 0; t < 5; t++)
        await source.transaction([['UPDATE accounts SET balance = balance + 10 WHERE id BETWEEN $1 AND $2', [t * 20 + 1, t * 20 + 20]]]);
      await source.transaction(accountInserts(5_001, 50));
      const slot = await runCli(['changes', 'status', '--json'], source.env);
      const stopped = JSON.parse(slot.stdout) as { slot: { active: boolean; lagBytes: number } };
      expect(stopped.slot.active).toBe(false);
      expect(stopped.slot.lagBytes).toBeGreaterThan(0); // the database kept the WAL for hookrun

      await spawn();
      await pollUntil('the changes made while stopped processed', 60_000, async () => ((await processedCount()) >= before + 150 ? true : undefined));
      const rows = await changes();
      expect(rows.length).toBe(before + 150);
      const row1 = rows.filter((r) => r.order_key === 'public.accounts:[1]').at(-1)!;
      expect(row1.payload.record).toEqual((await source.query('SELECT id, balance, note FROM accounts WHERE id = 1'))[0]);

      // Two instances: one streams, the other stands by; kill -9 the one that streams and the other takes over.
      for (const proc of started) await proc.stop(10_000);
      const [a, b] = [await spawn('consuming'), await spawn('standby')];
      const settled = (await changes()).length;
      await source.transaction(accountInserts(6_001, 20));
      a.kill('SIGKILL');
      const killedAt = Date.now();
      await a.waitForExit(10_000);
      await source.transaction(accountInserts(6_101, 20)); // committed while nobody streams
      await pollUntil('the standby streaming', 30_000, async () => ((await captureState(b)) === 'consuming' ? true : undefined));
      const takeoverMs = Date.now() - killedAt;
      await pollUntil('both batches processed', 30_000, async () => ((await processedCount()) >= settled + 40 ? true : undefined));
      expect((await changes()).length).toBe(settled + 40);
      reportFigures('changes standby takeover', { takeoverMs, stored: 40 });

      for (const proc of started) await proc.stop(10_000);
      const dropped = await runCli(['changes', 'drop-slot'], source.env);
      // A database that cannot replicate stops start-up with exit 78 and the fix (the main cluster runs wal_level=replica).
      const refused = await runCli(['start'], {
        DATABASE_URL: hookrunDb.url!,
        PORT: '0',
        CHANGES_DATABASE_URL: process.env.TEST_DATABASE_URL!,
        CHANGES_SLOT: source.slot,
      });
      expect(refused.code).toBe(78);
      expect(refused.stderr).toMatch(/wal_level is "replica", not "logical".*ALTER SYSTEM SET wal_level = logical/);
      expect(dropped.stdout).toMatch(new RegExp(`dropped slot "${source.slot}"`));
      expect(await source.query('SELECT 1 FROM pg_replication_slots WHERE slot_name = $1', [source.slot])).toEqual([]);
    },
  );
});
