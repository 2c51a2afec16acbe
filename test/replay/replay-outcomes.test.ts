import { describe, expect, it } from 'vitest';
import { HandlerRegistry } from '../../src/deliveries/registry.js';
import { advanceReplays } from '../../src/replay/advance.js';
import { startReplay } from '../../src/replay/batches.js';
import { failedAgainEvents, replayOutcomes } from '../../src/replay/outcomes.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { drain, storeEvent, testWorker } from '../inbox/fixtures.js';

describe.each(databaseKinds())('how a bulk replay ended, on $name', (kind) => {
  const testDb = useTestDatabase(kind);

  it('counts each batch’s events as they are now: succeeded, failed again (listed), unfinished', async () => {
    const { db } = testDb;
    const state = { broken: true };
    const handlers = new HandlerRegistry().on(
      'crm',
      'sync',
      async ({ event }) => {
        if (state.broken || (event.payload as { permanent?: boolean }).permanent) throw new Error(`customer cus_${event.id} has no plan`);
      },
      { name: 'sync-crm' },
    );
    const { worker, clock } = testWorker(db, { env: { MAX_ATTEMPTS: '1' }, handlers });
    const ids: number[] = [];
    for (let i = 0; i < 6; i++) ids.push(await storeEvent(db, 'crm', 'sync', { permanent: i === 1 || i === 4 }));
    await drain(worker);
    state.broken = false;

    const replay = async (replayIds: number[]) => {
      const batch = await startReplay(db, clock, { selection: { ids: replayIds }, rate: 100, actor: 'on-call' });
      while (!(await advanceReplays(db, clock, { yieldToInbox: false })).done) clock.advance(1000);
      return batch;
    };
    const first = await replay(ids.slice(0, 4));
    await drain(worker);
    const second = await replay(ids.slice(4)); // not run yet: both unfinished

    const outcomes = await replayOutcomes(db, [first, second]);
    expect(outcomes.get(first.id)).toEqual({ succeeded: 3, failedAgain: 1, unfinished: 0 });
    expect(outcomes.get(second.id)).toEqual({ succeeded: 0, failedAgain: 0, unfinished: 2 });
    const failed = await failedAgainEvents(db, first, 10);
    expect(failed).toEqual([
      { id: ids[1], source: 'crm', type: 'sync', status: 'dead', lastError: `customer cus_${ids[1]} has no plan (gave up after 1 attempts)` },
    ]);

    await drain(worker);
    expect((await replayOutcomes(db, [second])).get(second.id)).toEqual({ succeeded: 1, failedAgain: 1, unfinished: 0 });
    expect((await failedAgainEvents(db, second, 10)).map((e) => e.id)).toEqual([ids[4]]);
  });
});
