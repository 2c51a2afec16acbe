import { describe, expect, it } from 'vitest';
import { HandlerRegistry } from '../../src/deliveries/registry.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { eventRow, storeEvent, testWorker } from './fixtures.js';

/**
 * An on-demand pass (hookrun/next's processing after its answers, the drain
 * route) runs in the process that receives: before each delivery it lets the
 * receivers' queued inserts go first, so webhooks waiting for their commit are
 * answered before the next handler runs.
 */
describe.each(databaseKinds())('an on-demand pass beside the receivers on $name', (kind) => {
  const testDb = useTestDatabase(kind);

  it('waits for the queued inserts before each delivery, then processes every event', async () => {
    let reads = 0;
    let queued = 0;
    const readsAtStart: number[] = [];
    const handlers = new HandlerRegistry().on('test', 'thing', async () => {
      readsAtStart.push(reads);
      queued = 2; // more webhooks arrive while it runs
    });
    const ingest = {
      get queued() {
        reads++;
        if (queued === 0) return 0;
        return queued--; // written one poll at a time
      },
    };
    const { worker } = testWorker(testDb.db, { handlers, ingest });
    const ids = [
      await storeEvent(testDb.db, 'test', 'thing', {}),
      await storeEvent(testDb.db, 'test', 'thing', {}),
      await storeEvent(testDb.db, 'test', 'thing', {}),
    ];
    queued = 2;
    expect(await worker.runOnce(performance.now() + 30_000)).toBe(3);

    expect(readsAtStart).toHaveLength(3);
    // Each delivery started only after the pass looked at the queue again (two polls find inserts waiting, the third none;
    // the wait is bounded, so a stalled machine may start sooner, never without looking).
    expect(readsAtStart[0]).toBeGreaterThan(0);
    expect(readsAtStart[1]).toBeGreaterThan(readsAtStart[0]!);
    expect(readsAtStart[2]).toBeGreaterThan(readsAtStart[1]!);
    for (const id of ids) expect((await eventRow(testDb.db, id)).status).toBe('processed');
  });

  it('a batch of `hookrun start` (no deadline) does not wait on the receivers', async () => {
    let reads = 0;
    const handlers = new HandlerRegistry().on('test', 'thing', async () => undefined);
    const { worker } = testWorker(testDb.db, {
      handlers,
      ingest: {
        get queued() {
          reads++;
          return 1;
        },
      },
    });
    await storeEvent(testDb.db, 'test', 'thing', {});
    expect(await worker.runOnce()).toBe(1);
    expect(reads).toBe(0);
  });
});
