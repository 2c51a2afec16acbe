import { describe, expect, it } from 'vitest';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { useProjectDirs } from '../helpers/project-dir.js';
import { storeEvent, stripeEvent } from '../inbox/fixtures.js';
import { delivery, handlerFile, ran, resetRuns, runs, startService, steps } from './support.js';

const project = useProjectDirs('hookrun-steps-');
const HOUR = 3_600_000;

const invoice = (id: string, customer: string) => stripeEvent('invoice.paid', 1, { id, object: 'invoice', customer, amount_paid: 100 });

describe.each(databaseKinds())('durable steps on $name', (kind) => {
  const testDb = useTestDatabase(kind);

  it('a three-step handler whose second step fails once runs steps 1 and 3 once and step 2 twice', async () => {
    const { db } = testDb;
    await resetRuns(db);
    const dir = project({
      'handlers/onboard.ts': handlerFile(
        'stripe:invoice.paid',
        `const account = await ctx.step('create-account', async () => { ${ran("'one'")} return { id: 'acct_' + event.data.object.id }; });
         const seats = await ctx.step('provision', async () => {
           ${ran("'two'")}
           const [{ n }] = await ctx.db.query<{ n: number }>("SELECT count(*)::int AS n FROM step_runs WHERE step = 'two'");
           if (n === 1) throw new Error('provisioning is down');
           return 3;
         });
         await ctx.step('welcome', async () => { ${ran('`three:${account.id}:${seats}`')} });`,
      ),
    });
    const service = await startService(db, dir);
    const id = await storeEvent(db, 'payments', 'invoice.paid', invoice('in_1', 'cus_1'));
    await service.drain();
    expect(await runs(db)).toEqual({ one: 1, two: 1 });
    const failed = await delivery(db, id);
    expect(failed).toMatchObject({ status: 'failed', attempts: 1, last_error: expect.stringContaining('step "provision" failed: provisioning is down') });
    expect(await steps(db, id)).toEqual([
      { step_id: 'create-account', status: 'succeeded', attempts: 1 },
      { step_id: 'provision', status: 'failed', attempts: 1 },
    ]);
    service.clock.set(failed.runAfter);
    await service.drain();
    expect(await runs(db)).toEqual({ one: 1, two: 2, 'three:acct_in_1:3': 1 });
    expect(await delivery(db, id)).toMatchObject({ status: 'processed', attempts: 2 });
    expect((await steps(db, id)).map((s) => [s.step_id, s.status, s.attempts])).toEqual([
      ['create-account', 'succeeded', 1],
      ['provision', 'succeeded', 2],
      ['welcome', 'succeeded', 1],
    ]);
  });

  it('a step with its own attempts and backoff: retried after its backoff, dead with its error after its attempts', async () => {
    const { db } = testDb;
    await resetRuns(db);
    const dir = project({
      'handlers/charge.ts': handlerFile(
        'stripe:invoice.paid',
        `await ctx.step('charge', async () => { ${ran("'charge'")} throw new Error('card declined'); }, { attempts: 2, backoff: '10m' });`,
      ),
    });
    const service = await startService(db, dir);
    const id = await storeEvent(db, 'payments', 'invoice.paid', invoice('in_2', 'cus_2'));
    await service.drain();
    const first = await delivery(db, id);
    // the step's backoff (10 minutes, with the test's jitter of one half: 7.5 minutes), not the handler's 5 s
    expect(first.runAfter - service.clock.now()).toBe(7.5 * 60_000);
    service.clock.set(first.runAfter);
    await service.drain();
    expect(await runs(db)).toEqual({ charge: 2 });
    expect(await delivery(db, id)).toMatchObject({ status: 'dead', last_error: 'step "charge" failed 2 times: card declined' });
  });

  it('sleep: the delivery ends its attempt, holds nothing, and the step after it runs once at its time, after a restart too', async () => {
    const { db } = testDb;
    await resetRuns(db);
    const dir = project({
      'handlers/nudge.ts': handlerFile(
        'stripe:invoice.paid',
        `await ctx.step('before', async () => { ${ran("'before'")} });
         await ctx.sleep('wait-an-hour', '1h');
         await ctx.step('after', async () => { ${ran("'after'")} });`,
      ),
    });
    const first = await startService(db, dir);
    const start = first.clock.now();
    const id = await storeEvent(db, 'payments', 'invoice.paid', invoice('in_3', 'cus_3'));
    await first.drain();
    const asleep = await delivery(db, id);
    expect(asleep).toMatchObject({ status: 'pending', attempts: 0, runAfter: start + HOUR });
    const [lease] = await db.query<{ locked_until: Date | null }>(
      "SELECT locked_until FROM hookrun.handler_deliveries WHERE event_id = $1 AND handler NOT LIKE '%-mirror'",
      [id],
    );
    expect(lease!.locked_until).toBeNull();
    expect((await db.query<{ status: string }>('SELECT status FROM hookrun.webhook_events WHERE id = $1', [id]))[0]!.status).toBe('pending');
    first.clock.set(start + HOUR - 1000);
    await first.drain();
    expect(await runs(db)).toEqual({ before: 1 });
    // a restart: a new registry and worker, nothing carried over but the database
    const second = await startService(db, dir, first.clock);
    second.clock.set(start + HOUR);
    await second.drain();
    expect(await runs(db)).toEqual({ before: 1, after: 1 });
    expect(await delivery(db, id)).toMatchObject({ status: 'processed', attempts: 1 });
    expect((await steps(db, id)).map((s) => s.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    const attempts = await db.query('SELECT * FROM hookrun.event_attempts WHERE event_id = $1', [id]);
    expect(attempts).toEqual([]); // a sleep is no failed attempt
  });

  it('sleepUntil takes a date; a date already past goes straight on', async () => {
    const { db } = testDb;
    await resetRuns(db);
    const monday = new Date(Date.now() + 3 * 86_400_000).toISOString();
    const dir = project({
      'handlers/remind.ts': handlerFile(
        'stripe:invoice.paid',
        `await ctx.sleepUntil('past', new Date(0));
         ${ran("'between'")}
         await ctx.sleepUntil('monday', '${monday}');
         await ctx.step('after', async () => { ${ran("'after'")} });`,
      ),
    });
    const service = await startService(db, dir);
    const id = await storeEvent(db, 'payments', 'invoice.paid', invoice('in_4', 'cus_4'));
    await service.drain();
    expect(await delivery(db, id)).toMatchObject({ status: 'pending', runAfter: Date.parse(monday) });
    service.clock.set(Date.parse(monday));
    await service.drain();
    expect(await runs(db)).toEqual({ between: 2, after: 1 }); // code outside steps runs on every attempt
    expect(await delivery(db, id)).toMatchObject({ status: 'processed' });
  });
});
