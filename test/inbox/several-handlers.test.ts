import { describe, expect, it } from 'vitest';
import { listAttempts } from '../../src/db/events.js';
import { HandlerRegistry, type EventHandler } from '../../src/deliveries/registry.js';
import { replayEvent } from '../../src/inbox/replay.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { drain, eventRow, storeEvent, testWorker } from './fixtures.js';

/** Counts each handler's calls per event; `fail(name, n)` says whether call n of that handler throws. */
function twoHandlers(fail: (name: string, call: number) => boolean, isolated = true) {
  const calls = new Map<string, number>();
  const make =
    (name: string): EventHandler =>
    async ({ db, event }) => {
      const n = (calls.get(name) ?? 0) + 1;
      calls.set(name, n);
      await db.query('INSERT INTO fan_out_marks (handler, event_id, call) VALUES ($1, $2, $3)', [name, event.id, n]);
      if (fail(name, n)) throw new Error(`${name} boom ${n}`);
    };
  const handlers = new HandlerRegistry()
    .on('test', 'order.paid', make('send-receipt'), { name: 'send-receipt', isolated })
    .on('test', 'order.paid', make('update-crm'), { name: 'update-crm', isolated });
  return { handlers, calls };
}

describe.each(databaseKinds())('several handlers per event on $name', (kind) => {
  const testDb = useTestDatabase(kind);
  const marks = async () =>
    (await testDb.db.query<{ handler: string; call: number }>('SELECT handler, call FROM fan_out_marks ORDER BY handler, call')).map(
      (r) => `${r.handler}#${r.call}`,
    );

  it('each handler runs once per event; a failing one is retried alone, and its rolled-back writes are not kept', async () => {
    await testDb.db.query('CREATE TABLE IF NOT EXISTS fan_out_marks (handler text, event_id bigint, call int)');
    await testDb.db.query('TRUNCATE fan_out_marks');
    const { handlers, calls } = twoHandlers((name, n) => name === 'update-crm' && n <= 2);
    const { worker, clock, metrics } = testWorker(testDb.db, { handlers });
    const id = await storeEvent(testDb.db, 'test', 'order.paid', {});
    expect(await worker.runOnce()).toBe(2); // one delivery per handler
    expect(await eventRow(testDb.db, id)).toMatchObject({ status: 'failed', attempts: 1, last_error: 'update-crm failed: update-crm boom 1' });
    for (let i = 0; i < 2; i++) {
      clock.advance(3_600_000);
      await drain(worker);
    }
    expect(await eventRow(testDb.db, id)).toMatchObject({ status: 'processed', attempts: 3, last_error: null });
    expect(Object.fromEntries(calls)).toEqual({ 'send-receipt': 1, 'update-crm': 3 });
    // The two failed runs of update-crm wrote a mark and threw: their savepoint rolled the mark back.
    expect(await marks()).toEqual(['send-receipt#1', 'update-crm#3']);
    const history = await listAttempts(testDb.db, id);
    expect(history.map((a) => `${a.attempt}:${a.handler}:${a.outcome}`)).toEqual([
      '1:send-receipt:processed',
      '1:update-crm:failed',
      '2:update-crm:failed',
      '3:update-crm:processed',
    ]);
    const runs = (await metrics.handlerRuns.get()).values.map((v) => `${v.labels.handler} ${v.labels.outcome} ${v.value}`).sort();
    expect(runs).toEqual(['send-receipt processed 1', 'update-crm failed 2', 'update-crm processed 1']);
  });

  it('a handler goes dead alone, the event is dead, and replaying that handler runs only it', async () => {
    await testDb.db.query('CREATE TABLE IF NOT EXISTS fan_out_marks (handler text, event_id bigint, call int)');
    await testDb.db.query('TRUNCATE fan_out_marks');
    let broken = true;
    const { handlers, calls } = twoHandlers((name) => name === 'update-crm' && broken);
    const { worker, clock } = testWorker(testDb.db, { handlers, env: { MAX_ATTEMPTS: '2' } });
    const id = await storeEvent(testDb.db, 'test', 'order.paid', {});
    for (let i = 0; i < 3; i++) {
      await drain(worker);
      clock.advance(3_600_000);
    }
    const dead = await eventRow(testDb.db, id);
    expect(dead.status).toBe('dead');
    expect(dead.last_error).toMatch(/^update-crm dead: update-crm boom 2/);
    expect(Object.fromEntries(calls)).toEqual({ 'send-receipt': 1, 'update-crm': 2 });

    broken = false;
    await replayEvent(testDb.db, clock, id, { handler: 'update-crm' });
    await drain(worker);
    expect(await eventRow(testDb.db, id)).toMatchObject({ status: 'processed', attempts: 1 });
    expect(Object.fromEntries(calls)).toEqual({ 'send-receipt': 1, 'update-crm': 3 });

    // A replay of one handler of a processed event runs that one only; a plain replay runs both.
    await replayEvent(testDb.db, clock, id, { handler: 'send-receipt' });
    await drain(worker);
    expect(Object.fromEntries(calls)).toEqual({ 'send-receipt': 2, 'update-crm': 3 });
    await replayEvent(testDb.db, clock, id);
    await drain(worker);
    expect(Object.fromEntries(calls)).toEqual({ 'send-receipt': 3, 'update-crm': 4 });
    expect((await eventRow(testDb.db, id)).status).toBe('processed');
  });

  it('a plain replay of a dead event runs again only the handlers that died', async () => {
    await testDb.db.query('CREATE TABLE IF NOT EXISTS fan_out_marks (handler text, event_id bigint, call int)');
    let broken = true;
    const { handlers, calls } = twoHandlers((name) => name === 'send-receipt' && broken);
    const { worker, clock } = testWorker(testDb.db, { handlers, env: { MAX_ATTEMPTS: '1' } });
    const id = await storeEvent(testDb.db, 'test', 'order.paid', {});
    await drain(worker);
    expect((await eventRow(testDb.db, id)).status).toBe('dead');
    broken = false;
    await replayEvent(testDb.db, clock, id);
    await drain(worker);
    expect((await eventRow(testDb.db, id)).status).toBe('processed');
    expect(Object.fromEntries(calls)).toEqual({ 'send-receipt': 2, 'update-crm': 1 });
  });

  it('an isolated handler whose statement fails does not break the batch: the other events and handlers still commit', async () => {
    const seen: number[] = [];
    const handlers = new HandlerRegistry()
      .on('test', 'bad.sql', async ({ db }) => void (await db.query('SELECT * FROM no_such_table')), { name: 'bad-sql', isolated: true })
      .on('test', 'bad.sql', async ({ event }) => void seen.push(event.id), { name: 'fine', isolated: true });
    const { worker } = testWorker(testDb.db, { handlers, env: { MAX_ATTEMPTS: '1' } });
    const ids = [await storeEvent(testDb.db, 'test', 'bad.sql', {}), await storeEvent(testDb.db, 'test', 'bad.sql', {})];
    expect(await worker.runOnce()).toBe(4); // two events, two deliveries each
    for (const id of ids) {
      const row = await eventRow(testDb.db, id);
      expect(row.status).toBe('dead');
      expect(row.last_error).toMatch(/^bad-sql dead: .*no_such_table/);
    }
    expect(seen).toEqual(ids); // each ran once, in the shared transaction (no fallback re-run)
  });

  it.runIf(kind.name === 'postgres')(
    'one at a time after a shared handler broke the batch, a project handler still gets a transaction of its own: its throw keeps none of its writes',
    async () => {
      await testDb.db.query('CREATE TABLE IF NOT EXISTS fan_out_marks (handler text, event_id bigint, call int)');
      await testDb.db.query('TRUNCATE fan_out_marks');
      let calls = 0;
      const handlers = new HandlerRegistry()
        .on('test', 'breaks.batch', async ({ db }) => void (await db.query('SELECT * FROM no_such_table')), { name: 'shared-broken' })
        .on(
          'test',
          'writes.then.throws',
          async ({ db, event }) => {
            calls++;
            await db.query('INSERT INTO fan_out_marks VALUES ($1, $2, $3)', ['project', event.id, calls]);
            throw new Error('after writing');
          },
          { name: 'project', isolated: true },
        );
      const { worker } = testWorker(testDb.db, { handlers });
      await storeEvent(testDb.db, 'test', 'breaks.batch', {});
      const id = await storeEvent(testDb.db, 'test', 'writes.then.throws', {});
      expect(await worker.runOnce()).toBe(2);
      expect((await eventRow(testDb.db, id)).status).toBe('failed');
      expect(calls).toBeGreaterThanOrEqual(1);
      expect(await marks()).toEqual([]);
    },
  );
});
