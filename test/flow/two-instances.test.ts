import pino from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { openDatabase } from '../../src/db/client.js';
import type { Database } from '../../src/db/database.js';
import { parseFlowOptions } from '../../src/flow/options.js';
import { HandlerRegistry } from '../../src/deliveries/registry.js';
import { createWorker, type Worker, type WorkerOptions } from '../../src/inbox/worker.js';
import type { Logger } from '../../src/log.js';
import { Metrics } from '../../src/metrics.js';
import { testConfig } from '../helpers/config.js';
import { createPostgresDatabase, emptyTables, type TestDatabase } from '../helpers/db.js';
import { storeEvent, waitFor } from '../inbox/fixtures.js';

/**
 * Two instances of hookrun in one process: two workers, each on its own
 * database handle (its own pool) over one PostgreSQL database, on the real
 * clock, their loops running. What flow control promises across instances is
 * checked from the handlers' side (an in-process count both share) and from
 * the database's (the slots the claims granted).
 */

type Payload = { key: string };
const key = (event: Payload) => event.key;
/** How long the events may take to finish; the tests' own timeout is longer, so a miss says what was left. */
const DEADLINE_MS = 30_000;
const TEST_TIMEOUT_MS = 60_000;
/** Nothing is logged at warn or above when all goes well: a hand-over that deadlocked shows as "event failed: deadlock detected". */
const QUIET = 'the workers logged warnings or errors';
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A logger keeping the warnings and errors (a settle that failed, a claim that threw), so a test can show them. */
function recordingLogger(): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  return { log: pino({ level: 'warn' }, { write: (line: string) => void lines.push(line.trim()) }), lines };
}

describe.skipIf(!process.env.TEST_DATABASE_URL)('flow control across two instances (PostgreSQL)', { timeout: TEST_TIMEOUT_MS }, () => {
  let testDb: TestDatabase;
  let handles: Database[] = [];
  let workers: Worker[] = [];
  let logs: string[][] = [];

  beforeAll(async () => {
    testDb = await createPostgresDatabase();
    handles = [await openDatabase({ databaseUrl: testDb.url! }), await openDatabase({ databaseUrl: testDb.url! })];
  });
  afterAll(async () => {
    for (const handle of handles) await handle.close();
    await testDb?.close();
  });
  beforeEach(async () => {
    await emptyTables(testDb.db);
    workers = [];
    logs = [];
  });
  afterEach(async () => {
    await Promise.all(workers.map((w) => w.stop()));
  });

  /**
   * Start one worker per database handle, each with its own registry holding
   * handler `h` (the same function: both instances' runs share its state).
   */
  function startInstances(
    flow: Record<string, unknown>,
    run: (event: { id: number; payload: Payload }) => Promise<void>,
    env: Record<string, string> = {},
    options: WorkerOptions = {},
  ) {
    const plan = parseFlowOptions(flow);
    for (const db of handles) {
      const handlers = new HandlerRegistry().on('test', 'item.changed', async ({ event }) => run({ id: event.id, payload: event.payload as Payload }), {
        name: 'h',
        isolated: true,
        flow: plan,
      });
      const { log, lines } = recordingLogger();
      logs.push(lines);
      const worker = createWorker({
        db,
        config: testConfig(env),
        clock: systemClock,
        log,
        metrics: new Metrics(),
        handlers,
        options: { pollIntervalMs: 250, batchSize: 10, retry: { baseDelayMs: 50, maxDelayMs: 200 }, ...options },
      });
      workers.push(worker);
      worker.start();
    }
  }

  const store = (k: string) => storeEvent(testDb.db, 'test', 'item.changed', { key: k });

  async function storeAll(keys: string[]): Promise<number[]> {
    const ids: number[] = [];
    for (const k of keys) ids.push(await store(k));
    return ids;
  }

  /** Each event's status and its delivery's (handler h). */
  async function statuses(): Promise<Map<number, { event: string; delivery: string | null; lastError: string | null }>> {
    const rows = await testDb.db.query<{ id: number; status: string; delivery: string | null; last_error: string | null }>(
      `SELECT e.id, e.status, d.status AS delivery, e.last_error FROM hookrun.webhook_events e
       LEFT JOIN hookrun.handler_deliveries d ON d.event_id = e.id AND d.handler = 'h' ORDER BY e.id`,
    );
    return new Map(rows.map((r) => [Number(r.id), { event: r.status, delivery: r.delivery, lastError: r.last_error }]));
  }

  /** Wait until every event has left the inbox and its delivery (the deadline's failure names what was left). */
  async function waitAllFinished(ids: number[]): Promise<void> {
    try {
      await waitFor(async () => {
        const s = await statuses();
        return ids.every((id) => ['processed', 'dead'].includes(s.get(id)?.event ?? ''));
      }, DEADLINE_MS);
    } catch (error) {
      const left = [...(await statuses()).entries()].filter(([, s]) => !['processed', 'dead'].includes(s.event));
      throw new Error(`${(error as Error).message}; unfinished: ${JSON.stringify(left)}; logs: ${JSON.stringify(logs)}`);
    }
  }

  function countsOf(ids: number[]): Map<number, number> {
    const counts = new Map<number, number>();
    for (const id of ids) counts.set(id, (counts.get(id) ?? 0) + 1);
    return counts;
  }

  it('concurrency { limit: 3 }: never more than 3 running across both instances; each of 60 events runs once', async () => {
    let running = 0;
    let maxRunning = 0;
    const started: number[] = [];
    const ids = await storeAll(Array.from({ length: 60 }, (_, i) => `k${i}`));
    startInstances({ concurrency: { limit: 3 } }, async (event) => {
      started.push(event.id);
      running += 1;
      maxRunning = Math.max(maxRunning, running);
      try {
        await pause(30 + Math.floor(Math.random() * 30));
      } finally {
        running -= 1;
      }
    });
    await waitAllFinished(ids);
    expect(maxRunning).toBeLessThanOrEqual(3);
    expect(maxRunning).toBe(3); // the limit was reached, so it is what held the rest back
    expect([...countsOf(started).entries()].filter(([, n]) => n !== 1)).toEqual([]);
    expect(started.sort((a, b) => a - b)).toEqual(ids);
    const s = await statuses();
    expect(ids.map((id) => s.get(id)!.event)).toEqual(ids.map(() => 'processed'));
    expect(ids.map((id) => s.get(id)!.delivery)).toEqual(ids.map(() => 'processed'));
    expect(logs.flat().join('\n'), QUIET).toBe('');
  });

  it('concurrency { limit: 1, key }: one run at a time per key over 6 keys, across both instances', async () => {
    const running = new Map<string, number>();
    const maxPerKey = new Map<string, number>();
    let total = 0;
    let maxTotal = 0;
    const started: number[] = [];
    const keys = Array.from({ length: 48 }, (_, i) => `key${i % 6}`);
    const ids = await storeAll(keys);
    startInstances({ concurrency: { limit: 1, key } }, async (event) => {
      const k = event.payload.key;
      started.push(event.id);
      running.set(k, (running.get(k) ?? 0) + 1);
      maxPerKey.set(k, Math.max(maxPerKey.get(k) ?? 0, running.get(k)!));
      maxTotal = Math.max(maxTotal, (total += 1));
      try {
        await pause(20 + Math.floor(Math.random() * 20));
      } finally {
        running.set(k, running.get(k)! - 1);
        total -= 1;
      }
    });
    await waitAllFinished(ids);
    expect(Object.fromEntries(maxPerKey)).toEqual(Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`key${i}`, 1])));
    expect(maxTotal).toBeGreaterThan(1); // keys ran side by side
    expect([...countsOf(started).entries()].filter(([, n]) => n !== 1)).toEqual([]);
    expect(started.sort((a, b) => a - b)).toEqual(ids);
    const s = await statuses();
    expect(ids.map((id) => s.get(id)!.event)).toEqual(ids.map(() => 'processed'));
    expect(logs.flat().join('\n'), QUIET).toBe('');
  });

  it("rateLimit { limit: 20, period: '1s' }: granted slots keep the rate exactly; handlers start at their slot", async () => {
    const startedAt = new Map<number, number>();
    const ids = await storeAll(Array.from({ length: 80 }, (_, i) => `k${i}`));
    startInstances({ rateLimit: { limit: 20, period: '1s' } }, async (event) => {
      const now = Date.now();
      if (startedAt.has(event.id)) throw new Error(`event ${event.id} ran twice`);
      startedAt.set(event.id, now);
      await pause(2);
    });
    await waitAllFinished(ids);
    const s = await statuses();
    expect(ids.map((id) => s.get(id)!.event)).toEqual(ids.map(() => 'processed'));
    expect(logs.flat().join('\n'), QUIET).toBe('');

    // (a) The slots the claims granted, across both instances: GCRA without burst, one every 50 ms.
    const rows = await testDb.db.query<{ event_id: number; started_at: Date }>(
      `SELECT event_id, started_at FROM hookrun.handler_deliveries WHERE handler = 'h'`,
    );
    const slotOf = new Map(rows.map((r) => [Number(r.event_id), new Date(r.started_at).getTime()]));
    const slots = [...slotOf.values()].sort((a, b) => a - b);
    expect(slots).toHaveLength(80);
    expect(maxInWindow(slots, 1000)).toBeLessThanOrEqual(20);
    const gaps = slots.slice(1).map((t, i) => t - slots[i]!);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(50);

    // (b) The handlers' own starts on the wall clock. Only "never before its slot" holds by construction: a start
    // is late by the claim, the timer and BEGIN (up to ~350 ms seen on a loaded 2-core machine), so a late start
    // followed by an on-time one puts 21-23 starts in some 1000 ms windows, and slots lost to a late claim (no burst
    // to catch up) bring the overall rate to 17-20/s. Both are printed, not asserted.
    expect(startedAt.size).toBe(80);
    const early = ids.map((id) => startedAt.get(id)! - slotOf.get(id)!);
    const starts = [...startedAt.values()].sort((a, b) => a - b);
    const spanMs = starts.at(-1)! - starts[0]!;
    const rate = ((starts.length - 1) / spanMs) * 1000;
    const slotSpanMs = slots.at(-1)! - slots[0]!;
    console.log(
      `rate: slots span ${slotSpanMs} ms (${(((slots.length - 1) / slotSpanMs) * 1000).toFixed(2)}/s); starts span ${spanMs} ms (${rate.toFixed(2)}/s); ` +
        `start - slot: min ${Math.min(...early)} max ${Math.max(...early)} ms; wall-clock max per 1000 ms window ${maxInWindow(starts, 1000)}; ` +
        `slot gaps over 50 ms: ${gaps.filter((g) => g > 50).join(', ') || 'none'}; min gap between starts ${Math.min(...starts.slice(1).map((t, i) => t - starts[i]!))} ms; ` +
        `1000 ms windows (from each start) over 20: ${overWindows(starts, 1000, 20)}`,
    );
    expect(Math.min(...early)).toBeGreaterThanOrEqual(-1); // a timer fires no earlier than its slot (less the clocks' millisecond rounding)
  });

  it("order: 'key': each key's deliveries run one at a time in event order across both instances; a poison event is parked and its key goes on", async () => {
    const runs: Array<{ key: string; id: number }> = [];
    const running = new Map<string, number>();
    const overlaps: string[] = [];
    const keys = Array.from({ length: 45 }, (_, i) => ['A', 'B', 'C'][i % 3]!);
    const ids = await storeAll(keys);
    const byKey = (k: string) => ids.filter((_, i) => keys[i] === k);
    const poison = byKey('A')[4]!;
    startInstances(
      { order: 'key', key },
      async (event) => {
        const k = event.payload.key;
        runs.push({ key: k, id: event.id });
        running.set(k, (running.get(k) ?? 0) + 1);
        if (running.get(k)! > 1) overlaps.push(`${k}: ${event.id} started while another ran`);
        try {
          await pause(3 + Math.floor(Math.random() * 5));
          if (event.id === poison) throw new Error('poison');
        } finally {
          running.set(k, running.get(k)! - 1);
        }
      },
      { MAX_ATTEMPTS: '2' },
    );
    await waitAllFinished(ids);
    expect(overlaps).toEqual([]);
    const ran = (k: string) => runs.filter((r) => r.key === k).map((r) => r.id);
    // The poison runs twice in a row (its retry holds the key), then is parked and A goes on in order.
    const a = byKey('A');
    const at = a.indexOf(poison);
    const why = `key order broken; worker logs: ${JSON.stringify(logs)}`;
    expect(ran('A'), why).toEqual([...a.slice(0, at + 1), poison, ...a.slice(at + 1)]);
    expect(ran('B'), why).toEqual(byKey('B'));
    expect(ran('C'), why).toEqual(byKey('C'));
    const s = await statuses();
    expect(s.get(poison)).toMatchObject({ event: 'dead', delivery: 'parked' });
    expect(s.get(poison)!.lastError).toMatch(/^poison \(gave up after 2 attempts\)/);
    const others = ids.filter((id) => id !== poison);
    expect(others.map((id) => s.get(id)!.event)).toEqual(others.map(() => 'processed'));
    expect(others.map((id) => s.get(id)!.delivery)).toEqual(others.map(() => 'processed'));
    // Only the poison's failure and parking were logged.
    expect(
      logs
        .flat()
        .filter((line) => !line.includes(`"eventId":${poison}`))
        .join('\n'),
      QUIET,
    ).toBe('');
  });
});

/** The most timestamps in any half-open window [t, t + width) (the busiest window starts at one of them). */
function maxInWindow(sorted: number[], width: number): number {
  let best = 0;
  let j = 0;
  for (let i = 0; i < sorted.length; i++) {
    while (j < sorted.length && sorted[j]! < sorted[i]! + width) j++;
    best = Math.max(best, j - i);
  }
  return best;
}

/** How many windows [t, t + width) starting at a timestamp hold more than `limit`. */
function overWindows(sorted: number[], width: number, limit: number): number {
  let over = 0;
  let j = 0;
  for (let i = 0; i < sorted.length; i++) {
    while (j < sorted.length && sorted[j]! < sorted[i]! + width) j++;
    if (j - i > limit) over++;
  }
  return over;
}
