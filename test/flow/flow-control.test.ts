import { describe, expect, it } from 'vitest';
import { listAttempts } from '../../src/db/events.js';
import { setHandlerPaused } from '../../src/flow/controls.js';
import { HandlerRegistry } from '../../src/deliveries/registry.js';
import { replayEvent } from '../../src/inbox/replay.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { drain, eventRow, storeEvent, testWorker, waitFor } from '../inbox/fixtures.js';
import { deliveryStatuses, flowHandler, gate, runningDeliveries } from './support.js';

const key = (event: { key: string }) => event.key;

describe.each(databaseKinds())('flow control on $name', (kind) => {
  const testDb = useTestDatabase(kind);
  const store = (k: string) => storeEvent(testDb.db, 'test', 'item.changed', { key: k });
  const flowWorker = (handlers: HandlerRegistry, env: Record<string, string> = {}) => testWorker(testDb.db, { handlers, env, options: { flowHorizonMs: 0 } });

  it("a flow-controlled handler's delivery waits for its claim, runs, and the event is processed", async () => {
    const t = flowHandler({ concurrency: { limit: 1 } }, () => 0);
    const { worker } = flowWorker(t.handlers);
    const id = await store('a');
    expect(await worker.runOnce()).toBe(1); // the inbox claim writes its delivery
    expect((await eventRow(testDb.db, id)).status).toBe('pending');
    expect(await deliveryStatuses(testDb.db)).toEqual({ [id]: 'pending' });
    await drain(worker);
    expect((await eventRow(testDb.db, id)).status).toBe('processed');
    expect(await deliveryStatuses(testDb.db)).toEqual({ [id]: 'processed' });
    expect(t.calls.map((c) => c.eventId)).toEqual([id]);
    expect((await listAttempts(testDb.db, id)).map((a) => `${a.attempt}:${a.handler}:${a.outcome}`)).toEqual(['1:h:processed']);
  });

  it('concurrency: never more than the limit at once, whatever waits', async () => {
    const t = flowHandler({ concurrency: { limit: 2 } }, () => 0);
    const { worker, clock } = flowWorker(t.handlers);
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push(await store(`k${i}`));
    await drain(worker); // hands all five over and runs them
    const held = gate();
    t.state.gate = held.promise;
    t.state.maxRunning = 0;
    for (const id of ids) await replayEvent(testDb.db, clock, id);
    const round = worker.runOnce();
    await waitFor(() => t.state.running === 2);
    expect(await runningDeliveries(testDb.db)).toBe(2);
    held.open();
    await round;
    await drain(worker);
    expect(t.state.maxRunning).toBe(2);
    expect(Object.values(await deliveryStatuses(testDb.db))).toEqual(Array(5).fill('processed'));
  });

  it('concurrency per key: one key at its limit does not hold the others', async () => {
    const t = flowHandler({ concurrency: { limit: 1, key } }, () => 0);
    const { worker } = flowWorker(t.handlers);
    for (const k of ['a', 'a', 'a', 'b']) await store(k);
    await worker.runOnce();
    const held = gate();
    t.state.gate = held.promise;
    const round = worker.runOnce();
    await waitFor(() => t.state.running === 2);
    expect(t.calls.map((c) => c.key).sort()).toEqual(['a', 'b']);
    held.open();
    await round;
    await drain(worker);
    expect(t.calls.filter((c) => c.key === 'a')).toHaveLength(3);
    expect(t.state.maxRunning).toBe(2);
  });

  it('rateLimit: starts spaced period/limit apart on the injected clock; the rest wait, none is dropped', async () => {
    const t = flowHandler({ rateLimit: { limit: 2, period: '1s' } }, () => clock.now());
    const { worker, clock } = flowWorker(t.handlers);
    for (let i = 0; i < 4; i++) await store(`k${i}`);
    await worker.runOnce(); // hand over
    const start = clock.now();
    expect(await worker.runOnce()).toBe(1);
    expect(await worker.runOnce()).toBe(0); // the next slot is 500 ms away
    clock.advance(499);
    expect(await worker.runOnce()).toBe(0);
    clock.advance(1);
    expect(await worker.runOnce()).toBe(1);
    clock.advance(2000); // late: still one start per slot from now, no burst to catch up
    expect(await worker.runOnce()).toBe(1);
    expect(await worker.runOnce()).toBe(0);
    clock.advance(500);
    expect(await worker.runOnce()).toBe(1);
    expect(t.calls.map((c) => c.at - start)).toEqual([0, 500, 2500, 3000]);
  });

  it("order: 'key': one key runs in commit order; a poison delivery is parked and the key goes on; replay puts it back", async () => {
    const t = flowHandler({ order: 'key', key }, () => clock.now());
    const { worker, clock } = flowWorker(t.handlers, { MAX_ATTEMPTS: '2' });
    const [a1, a2, b1, a3] = [await store('a'), await store('a'), await store('b'), await store('a')];
    t.state.fail = (call) => call.eventId === a1;
    await worker.runOnce();
    expect(await worker.runOnce()).toBe(2); // a1 and b1: one per key
    expect(t.calls.map((c) => c.eventId).sort()).toEqual([a1, b1].sort());
    expect(await worker.runOnce()).toBe(0); // a1 is retrying: a2 waits behind it
    clock.advance(3_600_000);
    expect(await worker.runOnce()).toBe(1); // a1 again, and out of attempts: parked
    expect((await deliveryStatuses(testDb.db))[a1]).toBe('parked');
    await drain(worker);
    expect(t.calls.map((c) => c.eventId)).toEqual([...t.calls.slice(0, 2).map((c) => c.eventId), a1, a2, a3]);
    const parked = await eventRow(testDb.db, a1);
    expect(parked.status).toBe('dead');
    expect(parked.last_error).toMatch(/^boom \d+ \(gave up after 2 attempts\)/);
    expect((await eventRow(testDb.db, a3)).status).toBe('processed');

    t.state.fail = () => false;
    await replayEvent(testDb.db, clock, a1);
    await drain(worker);
    expect((await eventRow(testDb.db, a1)).status).toBe('processed');
    expect(t.calls.at(-1)!.eventId).toBe(a1);
  });

  it('debounce: events of one key within the period run once, with the last; the others are marked debounced', async () => {
    const t = flowHandler({ debounce: { period: '5s', key, maxWait: '1m' } }, () => clock.now());
    const { worker, clock } = flowWorker(t.handlers);
    const first = await store('a');
    await drain(worker);
    clock.advance(2000);
    const second = await store('a');
    const other = await store('b');
    await drain(worker);
    clock.advance(2000);
    const last = await store('a');
    await drain(worker);
    expect(t.calls).toEqual([]);
    clock.advance(5000);
    await drain(worker);
    // The two keys run side by side (on PostgreSQL in two transactions): in either order.
    expect(t.calls.map((c) => [c.eventId, c.debounced]).sort((x, y) => Number(x[0]) - Number(y[0]))).toEqual([
      [other, []],
      [last, [first, second]],
    ]);
    expect(await deliveryStatuses(testDb.db)).toEqual({ [first]: 'debounced', [second]: 'debounced', [other]: 'processed', [last]: 'processed' });
    for (const id of [first, second, other, last]) expect((await eventRow(testDb.db, id)).status).toBe('processed');
  });

  it('debounce: maxWait bounds the delay while events keep coming', async () => {
    const t = flowHandler({ debounce: { period: '5s', key, maxWait: '12s' } }, () => clock.now());
    const { worker, clock } = flowWorker(t.handlers);
    const start = clock.now();
    for (let i = 0; i < 5; i++) {
      await store('a');
      await drain(worker);
      clock.advance(4000);
    }
    expect(t.calls.map((c) => c.at - start)).toEqual([12_000]);
  });

  it('priority: a higher priority starts first; bounded, so an old delivery still goes ahead of a much later one', async () => {
    const t = flowHandler({ concurrency: { limit: 1 }, priority: (e: { p: number }) => e.p }, () => clock.now());
    const { worker, clock } = flowWorker(t.handlers);
    const storeP = (p: number) => storeEvent(testDb.db, 'test', 'item.changed', { key: String(p), p });
    const low = await storeP(0);
    await worker.runOnce();
    clock.advance(700_000); // over the 600 s bound: the high-priority one cannot jump this far
    const [mid, high] = [await storeP(100), await storeP(5000)];
    await worker.runOnce();
    await drain(worker);
    expect(t.calls.map((c) => c.eventId)).toEqual([low, high, mid]);
  });

  it('pause and resume: a paused handler waits on every claim, then drains', async () => {
    const registry = new HandlerRegistry();
    const seen: number[] = [];
    registry.on('test', 'item.changed', async ({ event }) => void seen.push(event.id), { name: 'plain', isolated: true });
    const { worker, clock } = flowWorker(registry);
    await setHandlerPaused(testDb.db, 'plain', true, clock.now());
    const id = await store('a');
    await drain(worker);
    expect(seen).toEqual([]);
    expect((await eventRow(testDb.db, id)).status).toBe('pending');
    await setHandlerPaused(testDb.db, 'plain', false, clock.now());
    await drain(worker);
    expect(seen).toEqual([id]);
    expect((await eventRow(testDb.db, id)).status).toBe('processed');
  });

  it('a key function that throws sends the delivery dead with the reason, and nothing else is lost', async () => {
    const t = flowHandler(
      {
        concurrency: {
          limit: 1,
          key: (e: { key: string }) => {
            if (e.key === 'bad') throw new Error('no customer');
            return e.key;
          },
        },
      },
      () => 0,
    );
    const { worker } = flowWorker(t.handlers);
    const [bad, good] = [await store('bad'), await store('good')];
    await drain(worker);
    const row = await eventRow(testDb.db, bad);
    expect(row.status).toBe('dead');
    expect(row.last_error).toMatch(/key function threw: no customer/);
    expect((await eventRow(testDb.db, good)).status).toBe('processed');
  });
});

describe.each(databaseKinds())('batches on $name', (kind) => {
  const testDb = useTestDatabase(kind);
  const store = (k: string) => storeEvent(testDb.db, 'test', 'item.changed', { key: k });

  it('runs up to maxSize events at once per key, a partial batch after maxWait, and counts a batch as one run', async () => {
    const t = flowHandler({ batch: { maxSize: 3, maxWait: '10s', key }, concurrency: { limit: 1 } }, () => clock.now());
    const { worker, clock, metrics } = testWorker(testDb.db, { handlers: t.handlers, options: { flowHorizonMs: 0 } });
    const a = [await store('a'), await store('a'), await store('a'), await store('a')];
    const b = await store('b');
    await drain(worker);
    expect(t.calls.map((c) => c.batch)).toEqual([a.slice(0, 3)]); // full: runs at once; 'a'’s fourth and 'b' wait for maxWait
    clock.advance(10_000);
    await drain(worker);
    expect(t.calls[0]!.batch).toEqual(a.slice(0, 3));
    expect(
      t.calls
        .slice(1)
        .map((c) => c.batch![0])
        .sort(),
    ).toEqual([a[3], b].sort()); // one partial batch per key
    expect(t.state.maxRunning).toBe(1);
    for (const id of [...a, b]) expect((await eventRow(testDb.db, id)).status).toBe('processed');
    expect(await runningDeliveries(testDb.db)).toBe(0);
    // Counted as the inbox counts: every delivery's outcome, each call of the handler timed once.
    const counted = async (metric: { get(): Promise<{ values: { value: number; labels: Record<string, unknown>; metricName?: string }[] }> }, name?: string) =>
      (await metric.get()).values
        .filter((v) => v.labels.outcome === 'processed' && (name === undefined || v.metricName === name))
        .reduce((n, v) => n + v.value, 0);
    expect(await counted(metrics.handlerRuns)).toBe(5);
    expect(await counted(metrics.eventsProcessed)).toBe(5);
    expect(await counted(metrics.processingDuration, 'hookrun_event_processing_seconds_count')).toBe(3);
  });

  it('a batch that throws is retried as a batch; a member sent to dead stays dead alone', async () => {
    const t = flowHandler({ batch: { maxSize: 2, maxWait: '1s' } }, () => clock.now());
    const { worker, clock } = testWorker(testDb.db, { handlers: t.handlers, options: { flowHorizonMs: 0 } });
    const [one, two] = [await store('x'), await store('y')];
    t.state.fail = (call) => t.calls.indexOf(call) === 0;
    t.state.deadMembers.add(two);
    await drain(worker);
    expect(t.calls.map((c) => c.batch)).toEqual([[one, two]]);
    expect(await deliveryStatuses(testDb.db)).toEqual({ [one]: 'failed', [two]: 'dead' });
    t.state.deadMembers.clear();
    clock.advance(3_600_000);
    await drain(worker);
    expect(t.calls.map((c) => c.batch)).toEqual([[one, two], [one]]);
    expect((await eventRow(testDb.db, one)).status).toBe('processed');
    const dead = await eventRow(testDb.db, two);
    expect(dead.status).toBe('dead');
    expect(dead.last_error).toMatch(/^member \d+ is bad/);
  });
});
