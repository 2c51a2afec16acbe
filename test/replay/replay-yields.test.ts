import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import type { Database } from '../../src/db/database.js';
import { EventWriter } from '../../src/db/event-writer.js';
import { HandlerRegistry } from '../../src/deliveries/registry.js';
import { setHandlerPaused } from '../../src/flow/controls.js';
import { advanceReplays, MAX_SLICE_EVENTS, MAX_YIELD_MS } from '../../src/replay/advance.js';
import { getReplay, MAX_RATE, startReplay } from '../../src/replay/batches.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { seedDeliveries, testWorker } from '../inbox/fixtures.js';

/** Events stored through the receivers' writer, side by side (group commit). */
async function store(db: Database, type: string, count: number): Promise<number[]> {
  const writer = new EventWriter(db);
  const stored = await Promise.all(
    Array.from({ length: count }, (_, i) => writer.write({ source: 'test', key: `${type}_${i}_${Math.random()}`, type, payloadJson: '{}' })),
  );
  return stored.map((s) => s.id);
}

/**
 * A bulk replay yields to ingest: its rate is a ceiling, not a claim on the
 * worker. While received events wait to be turned into deliveries, or the
 * replay's last slice is not claimed yet, it puts nothing back; a fast replay
 * goes in slices of MAX_SLICE_EVENTS. Observed as order: what the handler ran,
 * and what each step put back.
 */
describe.each(databaseKinds())('a bulk replay yields to the inbox on $name', (kind) => {
  const testDb = useTestDatabase(kind);

  function setup() {
    const ran: Array<{ type: string; id: number }> = [];
    const registry = new HandlerRegistry()
      .on('test', 'old', async (ctx) => void ran.push({ type: 'old', id: ctx.event.id }), { name: 'sync' })
      .on('test', 'fresh', async (ctx) => void ran.push({ type: 'fresh', id: ctx.event.id }), { name: 'sync-fresh' });
    const clock = new ManualClock(Date.now());
    const { worker } = testWorker(testDb.db, { handlers: registry, clock });
    return { ran, registry, clock, worker };
  }

  it('with fresh events waiting and a replay of 1,000 events at the top rate, the fresh ones run first; the replay goes a slice at a time behind the worker', async () => {
    const { db } = testDb;
    const { ran, registry, clock, worker } = setup();
    const old = await store(db, 'old', 1_000);
    await seedDeliveries(db, registry, 'dead');
    const replay = await startReplay(db, clock, { selection: { filter: { status: 'dead' } }, rate: MAX_RATE, actor: 'test' });
    const fresh = await store(db, 'fresh', 40);

    // Fresh events wait in the inbox: the replay puts nothing back.
    expect(await advanceReplays(db, clock)).toEqual({ batchId: replay.id, replayed: 0, done: false, yielded: true });
    clock.advance(1_000);
    expect((await advanceReplays(db, clock)).replayed).toBe(0);
    expect(await worker.runOnce()).toBe(40);
    expect(ran.map((r) => r.type)).toEqual(Array(40).fill('fresh'));

    // Then one slice, not the rate's thousand; and nothing more until the worker has claimed it.
    clock.advance(1_000);
    expect(await advanceReplays(db, clock)).toEqual({ batchId: replay.id, replayed: MAX_SLICE_EVENTS, done: false });
    clock.advance(1_000);
    expect(await advanceReplays(db, clock)).toMatchObject({ replayed: 0, yielded: true });
    expect(await getReplay(db, replay.id)).toMatchObject({ replayed: MAX_SLICE_EVENTS, cursor: old[MAX_SLICE_EVENTS - 1] });

    // Fresh events that arrive while the replay runs are run before the replay's next slice is even queued.
    let round = 0;
    for (; round < 50 && (await getReplay(db, replay.id))!.status === 'running'; round++) {
      const arrived = round % 3 === 0 ? await store(db, 'fresh', 5) : [];
      clock.advance(1_000);
      const step = await advanceReplays(db, clock);
      if (arrived.length > 0) expect(step, `round ${round}: fresh events waited`).toMatchObject({ replayed: 0, yielded: true });
      const before = ran.length;
      await worker.runOnce(); // the first claim takes the arrived events, whatever the replay queued
      const ranFresh = ran.slice(before).filter((r) => r.type === 'fresh');
      expect(new Set(ranFresh.map((r) => r.id)), `round ${round}: the arrived events ran in the first claim`).toEqual(new Set(arrived));
      while ((await worker.runOnce()) > 0);
      // Never more than a slice of replayed work ahead of the worker.
      expect(ran.slice(before).filter((r) => r.type === 'old').length).toBeLessThanOrEqual(MAX_SLICE_EVENTS);
    }
    expect(await getReplay(db, replay.id)).toMatchObject({ status: 'done', replayed: 1_000 });
    expect(new Set(ran.filter((r) => r.type === 'old').map((r) => r.id))).toEqual(new Set(old));
    expect(ran.filter((r) => r.type === 'fresh')).toHaveLength(fresh.length + 5 * Math.ceil(round / 3));
  });

  it('work nobody takes does not hold it for ever: no worker, a paused handler', async () => {
    const { db } = testDb;
    const { registry, clock } = setup();
    await store(db, 'old', 400);
    await seedDeliveries(db, registry, 'dead');
    const replay = await startReplay(db, clock, { selection: { filter: { status: 'dead' } }, rate: MAX_RATE, actor: 'test' });
    expect((await advanceReplays(db, clock)).replayed).toBe(MAX_SLICE_EVENTS);
    clock.advance(1_000);
    expect((await advanceReplays(db, clock)).yielded).toBe(true); // its slice waits for a worker
    clock.advance(MAX_YIELD_MS);
    expect((await advanceReplays(db, clock)).replayed).toBe(MAX_SLICE_EVENTS); // none came: it goes on
    await setHandlerPaused(db, 'sync', true, clock.now());
    clock.advance(1_000);
    expect((await advanceReplays(db, clock)).replayed).toBe(MAX_SLICE_EVENTS); // a paused handler's deliveries wait by design
    expect(await getReplay(db, replay.id)).toMatchObject({ replayed: 300, status: 'running' });
    // The CLI holding the embedded database (no worker can run) does not wait at all.
    await store(db, 'fresh', 3);
    clock.advance(1_000);
    expect(await advanceReplays(db, clock, { yieldToInbox: false })).toEqual({ batchId: replay.id, replayed: MAX_SLICE_EVENTS, done: true });
  });
});
