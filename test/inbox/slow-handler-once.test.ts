import { describe, expect, it } from 'vitest';
import { HandlerRegistry } from '../../src/deliveries/registry.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { eventRow, storeEvent, testWorker } from './fixtures.js';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A project handler slower than a batch may hold the database (the embedded
 * database's one session: 1 s) used to be cut at that budget and run again on
 * its own: its calls to other services happened twice. It now goes on outside
 * the batch, once, keeping what it wrote; its type runs on its own from then on.
 */
describe.each(databaseKinds())('a project handler slower than a batch on $name', (kind) => {
  const testDb = useTestDatabase(kind);

  it('runs once, keeps every write (before and after the budget), and the events beside it are processed', async () => {
    await testDb.db.query('CREATE TABLE IF NOT EXISTS public.slow_writes (event_id bigint, step text)');
    const calls = new Map<number, number>();
    const fast: number[] = [];
    const handlers = new HandlerRegistry()
      .on(
        'test',
        'slow',
        async ({ event, db }) => {
          calls.set(event.id, (calls.get(event.id) ?? 0) + 1); // a call to another service
          await db.query(`INSERT INTO public.slow_writes VALUES ($1, 'before')`, [event.id]);
          await pause(1500);
          await db.query(`INSERT INTO public.slow_writes VALUES ($1, 'after')`, [event.id]);
        },
        { name: 'slow-sync', isolated: true },
      )
      .on('test', 'quick', async ({ event }) => void fast.push(event.id), { name: 'quick-sync', isolated: true });
    const { worker } = testWorker(testDb.db, { handlers });
    const quickBefore = await storeEvent(testDb.db, 'test', 'quick', {});
    const slow = await storeEvent(testDb.db, 'test', 'slow', {});
    const quickAfter = await storeEvent(testDb.db, 'test', 'quick', {});
    // The claim after a hand-off takes what the batch gave back.
    for (let i = 0; i < 4; i++) await worker.runOnce();

    expect(calls.get(slow)).toBe(1);
    for (const id of [quickBefore, slow, quickAfter]) expect((await eventRow(testDb.db, id)).status, `event ${id}`).toBe('processed');
    expect(fast.sort()).toEqual([quickBefore, quickAfter].sort());
    const writes = await testDb.db.query<{ step: string }>('SELECT step FROM public.slow_writes WHERE event_id = $1 ORDER BY step', [slow]);
    expect(writes.map((w) => w.step)).toEqual(['after', 'before']);
    const [delivery] = await testDb.db.query<{ attempts: number }>(`SELECT attempts FROM hookrun.handler_deliveries WHERE event_id = $1`, [slow]);
    expect(delivery!.attempts).toBe(1);
  }, 20_000);

  it('a slow handler that fails is retried as any failure is: once per attempt', async () => {
    let runs = 0;
    const handlers = new HandlerRegistry().on(
      'test',
      'slow',
      async () => {
        runs++;
        await pause(1200);
        throw new Error('the CRM said no');
      },
      { name: 'slow-fail', isolated: true },
    );
    const { worker } = testWorker(testDb.db, { handlers });
    const id = await storeEvent(testDb.db, 'test', 'slow', {});
    await worker.runOnce();
    expect(runs).toBe(1);
    expect(await eventRow(testDb.db, id)).toMatchObject({ status: 'failed', attempts: 1, last_error: 'the CRM said no' });
  }, 20_000);
});
