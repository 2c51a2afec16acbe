import { describe, expect, it } from 'vitest';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { useProjectDirs } from '../helpers/project-dir.js';
import { storeEvent, stripeEvent } from '../inbox/fixtures.js';
import { delivery, handlerFile, ran, resetRuns, runs, startService } from './support.js';

const project = useProjectDirs('hookrun-flow-steps-');
const HOUR = 3_600_000;

const invoice = (id: string, customer: string) => stripeEvent('invoice.paid', 1, { id, object: 'invoice', customer, amount_paid: 100 });

/** Count a run before and after an hour's sleep. */
const SLEEPER = `await ctx.step('before', async () => { ${ran('`before:${event.data.object.id}`')} });
  await ctx.sleep('nap', '1h');
  await ctx.step('after', async () => { ${ran('`after:${event.data.object.id}`')} });`;

describe.each(databaseKinds())('steps under flow control on $name', (kind) => {
  const testDb = useTestDatabase(kind);

  it('a sleeping delivery holds no concurrency slot: the next one runs meanwhile; both resume at their time', async () => {
    const { db } = testDb;
    await resetRuns(db);
    const service = await startService(db, project({ 'handlers/sleeper.ts': handlerFile('stripe:invoice.paid', SLEEPER, 'concurrency: { limit: 1 },') }));
    const a = await storeEvent(db, 'payments', 'invoice.paid', invoice('in_a', 'cus_1'));
    const b = await storeEvent(db, 'payments', 'invoice.paid', invoice('in_b', 'cus_2'));
    await service.drain();
    expect(await runs(db)).toEqual({ 'before:in_a': 1, 'before:in_b': 1 });
    for (const id of [a, b]) expect(await delivery(db, id)).toMatchObject({ status: 'pending', attempts: 0 });
    service.clock.advance(HOUR);
    await service.drain();
    expect(await runs(db)).toEqual({ 'before:in_a': 1, 'before:in_b': 1, 'after:in_a': 1, 'after:in_b': 1 });
    for (const id of [a, b]) expect(await delivery(db, id)).toMatchObject({ status: 'processed', attempts: 1 });
  });

  it("order: 'key': a key's later events wait for its sleeping delivery; other keys go on", async () => {
    const { db } = testDb;
    await resetRuns(db);
    const options = `order: 'key', key: (event) => String(event.data.object.customer),`;
    const service = await startService(db, project({ 'handlers/sleeper.ts': handlerFile('stripe:invoice.paid', SLEEPER, options) }));
    const first = await storeEvent(db, 'payments', 'invoice.paid', invoice('in_1', 'cus_1'));
    const second = await storeEvent(db, 'payments', 'invoice.paid', invoice('in_2', 'cus_1'));
    const other = await storeEvent(db, 'payments', 'invoice.paid', invoice('in_3', 'cus_2'));
    await service.drain();
    expect(await runs(db)).toEqual({ 'before:in_1': 1, 'before:in_3': 1 });
    expect(await delivery(db, second)).toMatchObject({ status: 'pending', attempts: 0 });
    service.clock.advance(HOUR);
    await service.drain();
    expect(await runs(db)).toMatchObject({ 'after:in_1': 1, 'after:in_3': 1, 'before:in_2': 1 });
    service.clock.advance(HOUR);
    await service.drain();
    expect(await runs(db)).toMatchObject({ 'after:in_2': 1 });
    for (const id of [first, second, other]) expect(await delivery(db, id)).toMatchObject({ status: 'processed' });
  });
});
