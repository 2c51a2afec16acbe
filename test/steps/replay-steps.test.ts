import { describe, expect, it } from 'vitest';
import { replayEvent } from '../../src/inbox/replay.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { useProjectDirs } from '../helpers/project-dir.js';
import { storeEvent, stripeEvent } from '../inbox/fixtures.js';
import { delivery, handlerFile, ran, resetRuns, runs, startService } from './support.js';

const project = useProjectDirs('hookrun-replay-steps-');

/** Step two fails until the test's flag says the cause is fixed. */
const HANDLER = handlerFile(
  'stripe:invoice.paid',
  `await ctx.step('one', async () => { ${ran("'one'")} });
   await ctx.step('two', async () => {
     ${ran("'two'")}
     const [flag] = await ctx.db.query<{ fixed: boolean }>('SELECT fixed FROM step_fixed');
     if (!flag!.fixed) throw new Error('not yet');
   }, { attempts: 1 });
   await ctx.step('three', async () => { ${ran("'three'")} });`,
);

describe.each(databaseKinds())('replaying a delivery with steps on $name', (kind) => {
  const testDb = useTestDatabase(kind);

  it('goes on at the first step that did not succeed; --from-start runs every step again', async () => {
    const { db } = testDb;
    await resetRuns(db);
    await db.query('CREATE TABLE IF NOT EXISTS step_fixed (fixed boolean)');
    await db.query('TRUNCATE step_fixed');
    await db.query('INSERT INTO step_fixed VALUES (false)');
    const service = await startService(db, project({ 'handlers/three-steps.ts': HANDLER }));
    const id = await storeEvent(db, 'payments', 'invoice.paid', stripeEvent('invoice.paid', 1, { id: 'in_r', object: 'invoice', customer: 'cus_r' }));
    await service.drain();
    expect(await delivery(db, id)).toMatchObject({ status: 'dead', last_error: 'step "two" failed 1 times: not yet' });
    await db.query('UPDATE step_fixed SET fixed = true');
    await replayEvent(db, service.clock, id, { handler: 'three-steps' });
    await service.drain();
    expect(await runs(db)).toEqual({ one: 1, two: 2, three: 1 });
    expect(await delivery(db, id)).toMatchObject({ status: 'processed' });
    await replayEvent(db, service.clock, id, { handler: 'three-steps', fromStart: true });
    await service.drain();
    expect(await runs(db)).toEqual({ one: 2, two: 3, three: 2 });
  });
});
