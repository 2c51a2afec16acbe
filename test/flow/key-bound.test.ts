import { describe, expect, it } from 'vitest';
import { EventWriter } from '../../src/db/event-writer.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { testWorker } from '../inbox/fixtures.js';
import { flowHandler } from './support.js';

const key = (e: { key: string }) => e.key;

describe.each(databaseKinds())('per-key state is bounded on $name', (kind) => {
  const testDb = useTestDatabase(kind);
  const KEYS = kind.name === 'postgres' ? 2000 : 500; // the embedded database runs one statement at a time: fewer keys, the same test

  it('thousands of distinct keys come and go and leave no key rows behind once their rate windows close', async () => {
    const t = flowHandler({ concurrency: { limit: 2, key }, rateLimit: { limit: 1, period: '1s', key } }, () => clock.now());
    const { worker, clock } = testWorker(testDb.db, { handlers: t.handlers, options: { flowHorizonMs: 0, flowLocalLimit: 500, batchSize: 500 } });
    const writer = new EventWriter(testDb.db);
    await Promise.all(
      Array.from({ length: KEYS }, (_, i) =>
        writer.write({ source: 'test', key: `e${i}`, type: 'item.changed', payloadJson: JSON.stringify({ key: `customer_${i}` }) }),
      ),
    );
    const keyRows = async () => Number((await testDb.db.query<{ n: number }>('SELECT count(*)::int AS n FROM hookrun.flow_keys'))[0]!.n);
    let most = 0;
    for (let round = 0; round < 2_000; round++) {
      const claimed = await worker.runOnce();
      most = Math.max(most, await keyRows());
      if (claimed === 0) break;
    }
    expect(t.calls).toHaveLength(KEYS);
    expect(most).toBeLessThanOrEqual(KEYS); // one row per key with work or an open window, never more
    // Every key ran once: each is idle now, its row kept only while its rate window (1 s) is open.
    clock.advance(1_001);
    await worker.runOnce();
    expect(await keyRows()).toBe(0);
    expect(await testDb.db.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM hookrun.handler_deliveries GROUP BY status`)).toEqual([
      { status: 'processed', n: KEYS },
    ]);
  }, 120_000);

  it('one claim spreads its room over many keys with one delivery each: a key takes only what it has waiting', async () => {
    const t = flowHandler({ concurrency: { limit: 5, key } }, () => clock.now());
    const { worker, clock } = testWorker(testDb.db, { handlers: t.handlers, options: { flowHorizonMs: 0, flowLocalLimit: 5 } });
    const writer = new EventWriter(testDb.db);
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        writer.write({ source: 'test', key: `s${i}`, type: 'item.changed', payloadJson: JSON.stringify({ key: `spread_${i}` }) }),
      ),
    );
    let rounds = 0;
    while (t.calls.length < 20 && rounds < 40) {
      await worker.runOnce();
      rounds += 1;
    }
    expect(t.calls).toHaveLength(20);
    expect(rounds).toBeLessThanOrEqual(5); // 5 at a time: 4 claims (and the inbox's first), not one key per claim
  });
});
