import { describe, expect, it } from 'vitest';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { useProjectDirs } from '../helpers/project-dir.js';
import { storeEvent, stripeEvent } from '../inbox/fixtures.js';
import { delivery, handlerFile, ran, resetRuns, runs, startService, steps } from './support.js';

const project = useProjectDirs('hookrun-waits-');
const DAY = 86_400_000;

const checkout = (customer: string) => stripeEvent('checkout.session.completed', 1, { id: `cs_${customer}`, object: 'checkout.session', customer });
const invoice = (id: string, customer: string) => stripeEvent('invoice.paid', 1, { id, object: 'invoice', customer, amount_paid: 100 });

/** After checkout: wait a day for the customer's first invoice.paid, then record which invoice (or none) came. */
const FOLLOW_UP = handlerFile(
  'stripe:checkout.session.completed',
  `const paid = await ctx.waitForEvent('invoice-paid', { on: 'stripe:invoice.paid', match: 'data.object.customer', timeout: '1d' });
   const invoiceId: string | null = paid === null ? null : paid.data.object.id;
   await ctx.step('record', async () => { ${ran("`${event.data.object.customer}:${invoiceId ?? 'none'}`")} });`,
);

describe.each(databaseKinds())('ctx.waitForEvent on $name', (kind) => {
  const testDb = useTestDatabase(kind);

  it('resumes on the matching event and ignores one of another customer', async () => {
    const { db } = testDb;
    await resetRuns(db);
    const service = await startService(db, project({ 'handlers/follow-up.ts': FOLLOW_UP }));
    const start = service.clock.now();
    const id = await storeEvent(db, 'payments', 'checkout.session.completed', checkout('cus_1'));
    await service.drain();
    expect(await delivery(db, id)).toMatchObject({ status: 'pending', attempts: 0, runAfter: start + DAY });
    expect(await steps(db, id)).toEqual([{ step_id: 'invoice-paid', status: 'waiting', attempts: 1 }]);

    await storeEvent(db, 'payments', 'invoice.paid', invoice('in_other', 'cus_2'));
    await service.drain();
    expect(await delivery(db, id)).toMatchObject({ status: 'pending', runAfter: start + DAY });
    expect(await runs(db)).toEqual({});

    service.clock.advance(60_000);
    await storeEvent(db, 'payments', 'invoice.paid', invoice('in_1', 'cus_1'));
    await service.drain();
    expect(await runs(db)).toEqual({ 'cus_1:in_1': 1 });
    expect(await delivery(db, id)).toMatchObject({ status: 'processed', attempts: 1 });
  });

  it('times out to null without a matching event', async () => {
    const { db } = testDb;
    await resetRuns(db);
    const service = await startService(db, project({ 'handlers/follow-up.ts': FOLLOW_UP }));
    const id = await storeEvent(db, 'payments', 'checkout.session.completed', checkout('cus_3'));
    await service.drain();
    service.clock.advance(DAY - 1000);
    await service.drain();
    expect(await runs(db)).toEqual({});
    service.clock.advance(1000);
    await service.drain();
    expect(await runs(db)).toEqual({ 'cus_3:none': 1 });
    expect(await delivery(db, id)).toMatchObject({ status: 'processed' });
  });

  it('an event that arrived before the wait began counts (within the timeout)', async () => {
    const { db } = testDb;
    await resetRuns(db);
    const service = await startService(db, project({ 'handlers/follow-up.ts': FOLLOW_UP }));
    await storeEvent(db, 'payments', 'invoice.paid', invoice('in_early', 'cus_4'));
    await service.drain();
    const id = await storeEvent(db, 'payments', 'checkout.session.completed', checkout('cus_4'));
    await service.drain();
    expect(await runs(db)).toEqual({ 'cus_4:in_early': 1 });
    expect(await delivery(db, id)).toMatchObject({ status: 'processed', attempts: 1 });
  });

  it('a wait is stored under its key (event name, path, value) and its path remembered for the claim to look up', async () => {
    const { db } = testDb;
    await resetRuns(db);
    const service = await startService(db, project({ 'handlers/follow-up.ts': FOLLOW_UP }));
    await storeEvent(db, 'payments', 'checkout.session.completed', checkout('cus_5'));
    await service.drain();
    expect(await db.query('SELECT event_name, path FROM hookrun.wait_paths')).toEqual([{ event_name: 'payments:invoice.paid', path: 'data.object.customer' }]);
    const [wait] = await db.query<{ wait_key: string }>(`SELECT wait_key FROM hookrun.delivery_steps WHERE status = 'waiting'`);
    expect(wait!.wait_key.split('\u001f')).toEqual(['payments:invoice.paid', 'data.object.customer', 'cus_5']);
  });
});
