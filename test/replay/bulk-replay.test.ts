import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { openDatabase } from '../../src/db/client.js';
import type { Database } from '../../src/db/database.js';
import { HandlerRegistry } from '../../src/deliveries/registry.js';
import { advanceReplays } from '../../src/replay/advance.js';
import { cancelReplay, getReplay, listReplays, startReplay } from '../../src/replay/batches.js';
import { planReplay } from '../../src/replay/plan.js';
import { advanceReplaysUntil, createReplayRunner } from '../../src/replay/runner.js';
import { systemClock } from '../../src/clock.js';
import { silentLogger } from '../../src/log.js';
import { pollUntil } from '../helpers/poll.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { seedDeliveries, storeEvent, testWorker } from '../inbox/fixtures.js';

/** Two handlers on `test a`, one on `test b`. */
const registry = new HandlerRegistry()
  .on('test', 'a', async () => undefined, { name: 'h1' })
  .on('test', 'a', async () => undefined, { name: 'h2' })
  .on('test', 'b', async () => undefined, { name: 'h3' });

/** Events of `type` whose every delivery is in `status` (`running`: a worker holds them). */
async function seed(db: Database, count: number, status: string, type = 'a', payload: unknown = {}): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < count; i++) ids.push(await storeEvent(db, 'test', type, payload));
  await seedDeliveries(db, registry, status);
  return ids;
}

const deliveries = async (db: Database, id: number) =>
  Object.fromEntries(
    (await db.query<{ handler: string; status: string }>('SELECT handler, status FROM hookrun.handler_deliveries WHERE event_id = $1', [id])).map((r) => [
      r.handler,
      r.status,
    ]),
  );

const statuses = async (db: Database, ids: number[]) =>
  (await db.query<{ status: string }>('SELECT status FROM hookrun.webhook_events WHERE id = ANY($1::bigint[]) ORDER BY id', [ids])).map((r) => r.status);

const snapshot = async (db: Database) => ({
  events: await db.query('SELECT id, status, attempts, next_attempt_at FROM hookrun.webhook_events ORDER BY id'),
  deliveries: await db.query('SELECT * FROM hookrun.handler_deliveries ORDER BY id'),
  batches: await db.query('SELECT * FROM hookrun.replay_batches'),
});

describe.each(databaseKinds())('bulk replay on $name', (kind) => {
  const testDb = useTestDatabase(kind);
  const actor = 'test';

  it('the dry run counts what matches, what is skipped and which handlers run, and writes nothing', async () => {
    const { db } = testDb;
    const dead = await seed(db, 4, 'dead');
    const [busy] = await seed(db, 1, 'running');
    await seed(db, 2, 'dead', 'b');
    await seed(db, 3, 'processed'); // not selected by status dead
    // One dead event whose h1 finished: only h2 runs again.
    await db.query(`UPDATE hookrun.handler_deliveries SET status = 'processed' WHERE event_id = $1 AND handler = 'h1'`, [dead[0]]);
    const before = await snapshot(db);
    const plan = await planReplay(db, { filter: { status: 'dead' } }, undefined, { catalog: registry });
    expect(plan).toMatchObject({ matched: 6, replayable: 6, skipped: [], handlersFrom: 'registry' });
    expect(plan.handlers).toEqual([
      { name: 'h2', events: 4 },
      { name: 'h1', events: 3 },
      { name: 'h3', events: 2 },
    ]);
    const withBusy = await planReplay(db, { filter: { source: 'test', type: 'a' } }, 'h1', { catalog: registry });
    expect(withBusy.matched).toBe(8);
    expect(withBusy.skipped).toEqual([expect.objectContaining({ reason: 'processing', count: 1 })]);
    expect(withBusy.handlers).toEqual([{ name: 'h1', events: 7 }]);
    const byIds = await planReplay(db, { ids: [dead[1]!, busy!, 999_999] });
    expect(byIds).toMatchObject({ matched: 2, replayable: 1, handlersFrom: 'history' });
    expect(byIds.skipped.map((s) => [s.reason, s.count])).toEqual([
      ['processing', 1],
      ['not_found', 1],
    ]);
    expect(await snapshot(db)).toEqual(before);
  });

  it('replays `rate` events a second in id order, only those that existed at the start, then is done', async () => {
    const { db } = testDb;
    const clock = new ManualClock(Date.UTC(2026, 5, 1));
    const ids = await seed(db, 25, 'dead');
    const batch = await startReplay(db, clock, { selection: { filter: { status: 'dead' } }, rate: 10, actor });
    expect(batch).toMatchObject({ total: 25, replayed: 0, status: 'running', maxEventId: ids[24], description: 'status dead' });
    const late = await seed(db, 3, 'dead'); // after the start: not taken
    const noWorker = { yieldToInbox: false }; // nothing claims what it puts back here: the rate alone (replay-yields.test.ts has the yield)

    expect(await advanceReplays(db, clock, noWorker)).toEqual({ batchId: batch.id, replayed: 10, done: false });
    expect(await statuses(db, ids)).toEqual([...Array(10).fill('pending'), ...Array(15).fill('dead')]);
    expect(await advanceReplays(db, clock, noWorker)).toEqual({ replayed: 0, done: false }); // the same second: held
    clock.advance(999);
    expect((await advanceReplays(db, clock, noWorker)).replayed).toBe(0);
    clock.advance(1);
    expect((await advanceReplays(db, clock, noWorker)).replayed).toBe(10);
    expect(await getReplay(db, batch.id)).toMatchObject({ replayed: 20, cursor: ids[19], status: 'running' });
    clock.advance(1000);
    expect(await advanceReplays(db, clock, noWorker)).toEqual({ batchId: batch.id, replayed: 5, done: true });
    expect(await getReplay(db, batch.id)).toMatchObject({ replayed: 25, total: 25, status: 'done', finishedAt: new Date(clock.now()) });
    expect(await statuses(db, ids)).toEqual(Array(25).fill('pending'));
    expect(await statuses(db, late)).toEqual(['dead', 'dead', 'dead']);
    const [row] = await db.query<{ attempts: number }>('SELECT attempts FROM hookrun.webhook_events WHERE id = $1', [ids[0]]);
    expect(row).toEqual({ attempts: 0 });
    const history = await db.query<{ outcome: string; actor: string; run: number }>(
      `SELECT outcome, actor, run FROM hookrun.event_attempts WHERE event_id = $1 ORDER BY id`,
      [ids[0]],
    );
    expect(history).toEqual([
      { outcome: 'replayed', actor: `bulk replay #${batch.id} (test)`, run: 2 },
      { outcome: 'replayed', actor: `bulk replay #${batch.id} (test)`, run: 2 },
    ]);
    expect((await listReplays(db)).map((b) => b.id)).toEqual([batch.id]);
  });

  it('cancel stops a running replay; a second cancel is a conflict', async () => {
    const { db } = testDb;
    const clock = new ManualClock(Date.UTC(2026, 5, 1));
    const ids = await seed(db, 6, 'failed');
    const batch = await startReplay(db, clock, { selection: { filter: { status: 'failed' } }, rate: 2, actor });
    expect((await advanceReplays(db, clock)).replayed).toBe(2);
    expect(await cancelReplay(db, clock, batch.id)).toMatchObject({ status: 'cancelled', replayed: 2 });
    clock.advance(5000);
    expect(await advanceReplays(db, clock)).toEqual({ replayed: 0, done: false });
    expect(await statuses(db, ids)).toEqual(['pending', 'pending', 'failed', 'failed', 'failed', 'failed']);
    await expect(cancelReplay(db, clock, batch.id)).rejects.toMatchObject({ code: 'conflict' });
    await expect(cancelReplay(db, clock, 424242)).rejects.toMatchObject({ code: 'not_found' });
  });

  it('ids picked by hand: only those, a running one skipped; one handler only', async () => {
    const { db } = testDb;
    const clock = new ManualClock(Date.UTC(2026, 5, 1));
    const ids = await seed(db, 4, 'processed');
    await db.query(`UPDATE hookrun.handler_deliveries SET status = 'running' WHERE event_id = $1 AND handler = 'h2'`, [ids[2]]);
    const batch = await startReplay(db, clock, { selection: { ids: [ids[2]!, ids[0]!, ids[2]!, ids[3]!] }, handler: 'h2', rate: 100, actor });
    expect(batch).toMatchObject({ total: 2, selection: { ids: [ids[0], ids[2], ids[3]] }, handler: 'h2' });
    expect(await advanceReplays(db, clock)).toEqual({ batchId: batch.id, replayed: 2, done: true });
    expect(await statuses(db, ids)).toEqual(['pending', 'processed', 'processed', 'pending']);
    expect(await deliveries(db, ids[0]!)).toEqual({ h1: 'processed', h2: 'pending' });
    expect(await deliveries(db, ids[2]!)).toEqual({ h1: 'processed', h2: 'running' });
  });

  it('refuses an empty selection, a rate out of bounds and too many ids', async () => {
    const { db } = testDb;
    const clock = new ManualClock();
    await expect(startReplay(db, clock, { selection: { filter: { status: 'dead' } }, actor })).rejects.toMatchObject({ code: 'bad_request' });
    await seed(db, 1, 'dead');
    for (const rate of [0, 1001, 1.5])
      await expect(startReplay(db, clock, { selection: { filter: { status: 'dead' } }, rate, actor })).rejects.toThrow(/rate: .* 1 to 1000/);
    await expect(planReplay(db, { ids: Array.from({ length: 1001 }, (_, i) => i + 1) })).rejects.toThrow(/at most 1000 ids/);
    expect(await db.query('SELECT 1 FROM hookrun.replay_batches')).toEqual([]);
  });

  it('the runner the service starts advances a started replay to the end, and stops', async () => {
    const { db } = testDb;
    const ids = await seed(db, 30, 'dead');
    const runner = createReplayRunner({ db, clock: systemClock, log: silentLogger });
    runner.start();
    try {
      const batch = await startReplay(db, systemClock, { selection: { filter: { status: 'dead' } }, rate: 1000, actor });
      runner.wake();
      await pollUntil('the runner to finish the replay', 10_000, async () => ((await getReplay(db, batch.id))?.status === 'done' ? true : undefined));
      expect(await statuses(db, ids)).toEqual(Array(30).fill('pending'));
    } finally {
      await runner.stop();
    }
  });

  it('without the loop (a serverless drain), advances running replays at their rate within the budget, yields to what it put back, and stops at its end', async () => {
    const { db } = testDb;
    const ids = await seed(db, 12, 'dead');
    const batch = await startReplay(db, systemClock, { selection: { filter: { status: 'dead' } }, rate: 5, actor });
    // 12 events at 5 a second: three slices, a second apart, each once the drain's worker has taken the one before.
    const { worker } = testWorker(db, { handlers: registry, clock: new ManualClock(Date.now() + 60_000) });
    const put: number[] = [];
    for (let drains = 0; drains < 10 && (await getReplay(db, batch.id))!.status === 'running'; drains++) {
      put.push(await advanceReplaysUntil({ db, clock: systemClock }, performance.now() + 10_000));
      while ((await worker.runOnce()) > 0);
    }
    expect(put).toEqual([5, 5, 2]);
    expect(await getReplay(db, batch.id)).toMatchObject({ status: 'done', replayed: 12 });
    expect(await statuses(db, ids)).toEqual(Array(12).fill('processed'));
    // A budget shorter than the wait for the next slice returns at once, leaving the rest to the next drain.
    await seed(db, 10, 'failed');
    const next = await startReplay(db, systemClock, { selection: { filter: { status: 'failed' } }, rate: 5, actor });
    expect(await advanceReplaysUntil({ db, clock: systemClock }, performance.now() + 200)).toBe(5);
    expect(await getReplay(db, next.id)).toMatchObject({ status: 'running', replayed: 5 });
  });

  it.skipIf(kind.name !== 'postgres')('two instances on one database never replay an event twice', async () => {
    const other = await openDatabase({ databaseUrl: testDb.url });
    try {
      const clock = new ManualClock(Date.UTC(2026, 5, 1));
      const ids = await seed(testDb.db, 120, 'dead');
      await seed(testDb.db, 50, 'failed');
      const first = await startReplay(testDb.db, clock, { selection: { filter: { status: 'dead' } }, rate: 7, actor });
      const second = await startReplay(testDb.db, clock, { selection: { filter: { status: 'failed' } }, rate: 5, actor });
      let replayed = 0;
      let seconds = 0;
      for (; seconds < 100; seconds++) {
        const steps = await Promise.all([testDb.db, other, testDb.db, other].map((db) => advanceReplays(db, clock)));
        replayed += steps.reduce((sum, s) => sum + s.replayed, 0);
        const running = await testDb.db.query(`SELECT 1 FROM hookrun.replay_batches WHERE status = 'running'`);
        if (running.length === 0) break;
        clock.advance(1000);
      }
      expect(replayed).toBe(170);
      expect(await getReplay(testDb.db, first.id)).toMatchObject({ replayed: 120, status: 'done' });
      expect(await getReplay(testDb.db, second.id)).toMatchObject({ replayed: 50, status: 'done' });
      expect(seconds).toBeGreaterThanOrEqual(17); // 120 at 7 a second: at least 18 slices, however many instances
      expect(await statuses(testDb.db, ids)).toEqual(Array(120).fill('pending'));
    } finally {
      await other.close();
    }
  });
});
