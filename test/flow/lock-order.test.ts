import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { openDatabase } from '../../src/db/client.js';
import type { Database } from '../../src/db/database.js';
import { EventWriter } from '../../src/db/event-writer.js';
import { parseFlowOptions } from '../../src/flow/options.js';
import { HandlerRegistry } from '../../src/deliveries/registry.js';
import { createWorker, type Worker } from '../../src/inbox/worker.js';
import { Metrics } from '../../src/metrics.js';
import { testConfig } from '../helpers/config.js';
import { createPostgresDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../inbox/fixtures.js';

const CUSTOMERS = 40;
const EVENTS = 400;

/**
 * Two instances, each writing and processing, with two debounced handlers
 * on two event types keyed by customer: the traffic that deadlocked when a
 * hand-over locked handler rows in event order. Every statement that locks
 * several key or control rows now takes them in one sorted order.
 */
describe.skipIf(!process.env.TEST_DATABASE_URL)('one lock order across two instances (PostgreSQL)', { timeout: 60_000 }, () => {
  let testDb: TestDatabase;
  let handles: Database[] = [];
  const workers: Worker[] = [];
  const lines: string[] = [];

  beforeAll(async () => {
    testDb = await createPostgresDatabase();
    handles = [await openDatabase({ databaseUrl: testDb.url! }), await openDatabase({ databaseUrl: testDb.url! })];
  });
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    for (const handle of handles) await handle.close();
    await testDb?.close();
  });

  it('alternating events of two debounced handlers: all processed within seconds, each handler once per customer, no deadlock', async () => {
    const runs = new Map<string, number>();
    const customer = (event: { data: { customer: string } }) => event.data.customer;
    for (const db of handles) {
      const handlers = new HandlerRegistry();
      for (const [name, type] of [
        ['sync-invoices', 'invoice.paid'],
        ['sync-customers', 'customer.updated'],
      ] as const) {
        handlers.on(
          'test',
          type,
          async ({ event }) => {
            const id = `${name} ${customer(event.payload as { data: { customer: string } })}`;
            runs.set(id, (runs.get(id) ?? 0) + 1);
          },
          { name, isolated: true, flow: parseFlowOptions({ debounce: { period: '3s', key: customer } }) },
        );
      }
      const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(line.trim()) });
      const worker = createWorker({
        db,
        config: testConfig(),
        clock: systemClock,
        log,
        metrics: new Metrics(),
        handlers,
        options: { pollIntervalMs: 100, batchSize: 20 },
      });
      workers.push(worker);
      worker.start();
    }
    const writers = handles.map((db, i) => new EventWriter(db, () => workers[i]!.wake()));
    await Promise.all(
      Array.from({ length: EVENTS }, (_, i) =>
        writers[i % 2]!.write({
          source: 'test',
          key: `evt_${i}`,
          type: Math.floor(i / CUSTOMERS) % 2 === 0 ? 'invoice.paid' : 'customer.updated',
          payloadJson: JSON.stringify({ data: { customer: `cus_${i % CUSTOMERS}` } }),
        }),
      ),
    );
    const unfinished = async () =>
      Number((await testDb.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM hookrun.webhook_events WHERE status <> 'processed'`))[0]!.n);
    try {
      await waitFor(async () => (await unfinished()) === 0, 30_000);
    } catch (error) {
      throw new Error(`${(error as Error).message}: ${await unfinished()} of ${EVENTS} unfinished; logs: ${lines.join('\n').slice(-3000)}`);
    }
    const expected = new Map<string, number>();
    for (let c = 0; c < CUSTOMERS; c++) for (const name of ['sync-invoices', 'sync-customers']) expected.set(`${name} cus_${c}`, 1);
    expect(Object.fromEntries(runs)).toEqual(Object.fromEntries(expected));
    const folded = await testDb.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM hookrun.handler_deliveries WHERE status = 'debounced'`);
    expect(folded[0]!.n).toBe(EVENTS - 2 * CUSTOMERS);
    expect(lines.filter((line) => /deadlock|40P01/.test(line))).toEqual([]);
    expect(lines.filter((line) => (JSON.parse(line) as { level: number }).level >= 40)).toEqual([]);
  });
});
