import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { openDatabase } from '../../src/db/client.js';
import type { Database } from '../../src/db/database.js';
import { EventWriter } from '../../src/db/event-writer.js';
import { EVENTS_CHANNEL } from '../../src/inbox/queue-sql.js';
import { HandlerRegistry } from '../../src/deliveries/registry.js';
import { createWorker } from '../../src/inbox/worker.js';
import { silentLogger } from '../../src/log.js';
import { Metrics } from '../../src/metrics.js';
import { databaseKinds, useTestDatabase, type TestDatabase } from '../helpers/db.js';
import { testConfig } from '../helpers/config.js';
import { deliveryRows, drain, eventRow, storeEvent, testWorker, waitFor } from './fixtures.js';

describe.each(databaseKinds())('inbox plumbing on $name', (kind) => {
  const testDb = useTestDatabase(kind);

  it('a committed insert NOTIFYs hookrun_events once; a duplicate does not', async () => {
    const notes: string[] = [];
    const unlisten = await testDb.db.listen(EVENTS_CHANNEL, (payload) => notes.push(payload));
    try {
      const writer = new EventWriter(testDb.db);
      const stored = await Promise.all([1, 2, 3].map((n) => writer.write({ source: 'auth', key: `k${n}`, type: 't', payloadJson: '{}' })));
      expect(stored.map((s) => s.duplicate)).toEqual([false, false, false]);
      await waitFor(() => notes.length >= 1);
      const seen = notes.length;
      expect(await writer.write({ source: 'auth', key: 'k1', type: 't', payloadJson: '{}' })).toMatchObject({ duplicate: true });
      await testDb.db.query(`SELECT pg_notify('${EVENTS_CHANNEL}', 'marker')`);
      await waitFor(() => notes.includes('marker'));
      expect(notes.length).toBe(seen + 1); // only the marker arrived after the duplicate
    } finally {
      await unlisten();
    }
  });

  it('stop() lets the running handler finish and settle', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let running = false;
    const handlers = new HandlerRegistry().on('test', 'slow', () => {
      running = true;
      return gate;
    });
    const { worker } = testWorker(testDb.db, { handlers, options: { pollIntervalMs: 50 } });
    const id = await storeEvent(testDb.db, 'test', 'slow', {});
    worker.start();
    // The handler itself, not its delivery's status: a claim committed `running` whose batch sees the stop before it
    // starts a handler hands the claim back (pending, for the next instance), which is not what this case is about.
    await waitFor(() => running);
    expect((await deliveryRows(testDb.db, id))[0]?.status).toBe('running');
    const stopped = worker.stop();
    release();
    await stopped;
    expect(await eventRow(testDb.db, id)).toMatchObject({ status: 'processed', attempts: 1 });
  });

  it('a database that fails is logged and retried with backoff: no crash, no spin, stop() still resolves', async () => {
    let calls = 0;
    const broken: Database = {
      ...testDb.db,
      query: async () => {
        calls += 1;
        throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
      },
      listen: async () => {
        throw new Error('connect ECONNREFUSED');
      },
    };
    const logged: string[] = [];
    const log = silentLogger.child({});
    for (const level of ['error', 'warn', 'info'] as const) {
      (log as unknown as Record<string, unknown>)[level] = (_obj: unknown, msg?: string) => void logged.push(`${level}:${msg ?? String(_obj)}`);
    }
    const worker = createWorker({ db: broken, config: testConfig(), clock: new ManualClock(), log, metrics: new Metrics(), options: { pollIntervalMs: 10 } });
    worker.start();
    await waitFor(() => logged.filter((l) => l.includes('backing off')).length >= 2);
    const callsAtSecondFailure = calls;
    await worker.stop();
    expect(logged[0]).toMatch(/^warn:cannot LISTEN/);
    expect(logged.filter((l) => l.includes('backing off'))[0]).toMatch(/^error:/);
    // Each failed cycle costs one query, then a sleep of at least 250 ms: never a hot loop.
    expect(callsAtSecondFailure).toBeLessThanOrEqual(3);
    await expect(worker.runOnce()).rejects.toThrow(/ECONNREFUSED/);
  });
});

describe.skipIf(!process.env.TEST_DATABASE_URL)('two workers on one PostgreSQL', () => {
  let handle: TestDatabase;
  let second: Database;
  beforeAll(async () => {
    handle = await databaseKinds()
      .find((k) => k.name === 'postgres')!
      .create();
    second = await openDatabase({ databaseUrl: handle.url! });
  });
  afterAll(async () => {
    await second.close();
    await handle.close();
  });

  it('never process the same event twice', async () => {
    const db = handle.db;
    const calls = new Map<number, number>();
    const handlers = new HandlerRegistry().on('test', 'count', async ({ event }) => {
      calls.set(event.id, (calls.get(event.id) ?? 0) + 1);
      await new Promise((resolve) => setImmediate(resolve));
    });
    const writer = new EventWriter(db);
    const total = 300;
    await Promise.all(Array.from({ length: total }, (_, n) => writer.write({ source: 'test', key: `e${n}`, type: 'count', payloadJson: '{}' })));
    const a = testWorker(db, { handlers, options: { batchSize: 5 } }).worker;
    const b = testWorker(second, { handlers, options: { batchSize: 5 } }).worker;
    const claimedBy = await Promise.all([drainCount(a), drainCount(b)]);
    expect(calls.size).toBe(total);
    expect([...calls.values()].every((n) => n === 1)).toBe(true);
    expect(claimedBy[0]! + claimedBy[1]!).toBe(total);
    expect(claimedBy[0]).toBeGreaterThan(0);
    expect(claimedBy[1]).toBeGreaterThan(0);
    const [row] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM hookrun.webhook_events WHERE status = 'processed' AND attempts = 1`);
    expect(row!.n).toBe(total);
    await drain(a);
  });
});

async function drainCount(worker: { runOnce(): Promise<number> }): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await worker.runOnce();
    if (n === 0) return total;
    total += n;
  }
}
