import { describe, expect, it } from 'vitest';
import { pgliteOnly, useTestDatabase } from '../helpers/db.js';
import { useProjectDirs } from '../helpers/project-dir.js';
import { storeEvent, stripeEvent } from '../inbox/fixtures.js';
import { delivery, handlerFile, ran, resetRuns, runs, startService, steps } from './support.js';

const project = useProjectDirs('hookrun-step-errors-');

const invoice = (id: string) => stripeEvent('invoice.paid', 1, { id, object: 'invoice', customer: 'cus_1', amount_paid: 100 });

describe.each(pgliteOnly())('bad steps on $name: dead at once, with the fix, and no succeeded step run again', (kind) => {
  const testDb = useTestDatabase(kind);

  /** Run `body` as a handler on one event; its delivery afterwards. */
  async function outcome(body: string, options = '') {
    await resetRuns(testDb.db);
    const service = await startService(testDb.db, project({ 'handlers/bad.ts': handlerFile('stripe:invoice.paid', body, options) }));
    const id = await storeEvent(testDb.db, 'payments', 'invoice.paid', invoice(`in_${Math.random()}`));
    await service.drain();
    return { ...(await delivery(testDb.db, id)), id, service };
  }

  it('two steps with one id in a run', async () => {
    const d = await outcome(`await ctx.step('email', () => 1);\nawait ctx.step('email', () => 2);`);
    expect(d).toMatchObject({
      status: 'dead',
      last_error: expect.stringContaining('ctx.step("email") was called twice in one run: give each step its own id'),
    });
  });

  it('a result JSON cannot carry: a Date, a BigInt, a class instance, each with what to return instead', async () => {
    const date = await outcome(`await ctx.step('when', async () => { ${ran("'when'")} return { at: new Date() }; });`);
    expect(date).toMatchObject({ status: 'dead', last_error: expect.stringContaining('ctx.step("when"): result.at is a Date: return date.toISOString()') });
    expect(await runs(testDb.db)).toEqual({ when: 1 });
    const big = await outcome(`await ctx.step('total', () => 10n);`);
    expect(big.last_error).toContain('result is a BigInt: return String(n)');
    const instance = await outcome(`class Account { constructor(public id: string) {} }\nawait ctx.step('account', () => [new Account('a')]);`);
    expect(instance.last_error).toContain('result[0] is an instance of Account: return a plain object');
  });

  it('a result over 256 KB', async () => {
    const d = await outcome(`await ctx.step('export', () => 'x'.repeat(300 * 1024));`);
    expect(d.last_error).toMatch(/ctx\.step\("export"\): its result is 301 KB of JSON; a step may store at most 256 KB\. Write large data to your own table/);
  });

  it('more than 1,000 steps', async () => {
    const d = await outcome(`for (let i = 0; i < 1001; i++) await ctx.step('item-' + i, () => i);`);
    expect(d.last_error).toContain('ctx.step("item-1000"): a delivery may have at most 1000 steps');
  });

  it('a sleep past a year, a duration or date that does not read', async () => {
    expect((await outcome(`await ctx.sleep('long', '400d');`)).last_error).toContain('ctx.sleep("long"): at most a year');
    expect((await outcome(`await ctx.sleep('typo', '5 minutes');`)).last_error).toContain(`ctx.sleep("typo") "5 minutes" is not a duration`);
    expect((await outcome(`await ctx.sleepUntil('when', 'next monday');`)).last_error).toContain(`ctx.sleepUntil("when") "next monday" is not a date or time`);
  });

  it('a wait on events no configured sender delivers, or on a path this event lacks', async () => {
    const other = await outcome(`await ctx.waitForEvent('paid', { on: 'paddle:transaction.paid' as never, match: 'data.object.customer', timeout: '1d' });`);
    expect(other).toMatchObject({ status: 'dead', last_error: expect.stringMatching(/^ctx\.waitForEvent\("paid"\): .*paddle/) });
    const path = await outcome(`await ctx.waitForEvent('paid', { on: 'stripe:invoice.paid', match: 'data.object.nothing', timeout: '1d' });`);
    expect(path.last_error).toContain('this event has no text or number at "data.object.nothing"');
  });

  it('steps that changed under a sleeping delivery: dead naming both, and the step that succeeded is not run again', async () => {
    const { db } = testDb;
    await resetRuns(db);
    const before = project({
      'handlers/bad.ts': handlerFile('stripe:invoice.paid', `await ctx.step('one', async () => { ${ran("'one'")} });\nawait ctx.sleep('nap', '1h');`),
    });
    const first = await startService(db, before);
    const id = await storeEvent(db, 'payments', 'invoice.paid', invoice('in_changed'));
    await first.drain();
    const after = project({
      'handlers/bad.ts': handlerFile(
        'stripe:invoice.paid',
        `await ctx.step('one-renamed', async () => { ${ran("'renamed'")} });\nawait ctx.sleep('nap', '1h');`,
      ),
    });
    const second = await startService(db, after, first.clock);
    second.clock.advance(3_600_000);
    await second.drain();
    expect(await delivery(db, id)).toMatchObject({
      status: 'dead',
      last_error: expect.stringContaining(`ctx.step("one-renamed") is step 1 of this run, but an earlier attempt stored "one" there`),
    });
    expect(await runs(db)).toEqual({ one: 1 });
    expect((await steps(db, id)).map((s) => s.step_id)).toEqual(['one', 'nap']);
  });

  it('a batch handler cannot use steps', async () => {
    const d = await outcome(`await ctx.step('x', () => 1);`, `batch: { maxSize: 2, maxWait: '1ms' },`);
    d.service.clock.advance(1000);
    await d.service.drain();
    expect(await delivery(testDb.db, d.id)).toMatchObject({ status: 'dead', last_error: expect.stringContaining('A batch handler cannot use steps') });
  });
});
