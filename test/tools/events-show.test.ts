import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/client.js';
import { HandlerRegistry } from '../../src/deliveries/registry.js';
import { runCli, seedDataDir } from '../helpers/spawn-hookrun.js';
import pino from 'pino';
import { ManualClock } from '../../src/clock.js';
import { createWorker } from '../../src/inbox/worker.js';
import { Metrics } from '../../src/metrics.js';
import { testConfig } from '../helpers/config.js';
import { drain, storeEvent } from '../inbox/fixtures.js';

/** A handler's error as a real one reads: two lines of message and eight frames of the project's own code. */
function paymentError(): Error {
  const error = new Error('payment API refused the charge\nrequest id req_123');
  error.stack = [`Error: ${error.message}`, ...Array.from({ length: 8 }, (_, i) => `    at step${i} (/app/handlers/notify.ts:${i + 1}:5)`)].join('\n');
  return error;
}

/** The fields of a worker's log line this test reads. */
interface LogLine {
  msg: string;
  handler?: string;
  err?: { message: string; stack?: string };
}

describe('hookrun events show: each handler with its attempts, error and stack, as GET /api/events/:id has them', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookrun-events-show-'));
  const env = { DATA_DIR: join(dir, 'data'), LOG_LEVEL: 'warn', SCHEDULER: 'off' };
  let failing = 0;
  let processed = 0;
  const logLines: LogLine[] = [];

  beforeAll(async () => {
    await seedDataDir(env.DATA_DIR);
    const db = await openDatabase({ dataDir: env.DATA_DIR });
    try {
      const handlers = new HandlerRegistry()
        .on('test', 'order.paid', () => Promise.reject(paymentError()), { name: 'notify' })
        .on('test', 'order.paid', async () => undefined, { name: 'record' })
        .on('test', 'order.shipped', async () => undefined, { name: 'record' });
      failing = await storeEvent(db, 'test', 'order.paid', { order: 1 });
      processed = await storeEvent(db, 'test', 'order.shipped', { order: 1 });
      const log = pino({ level: 'warn' }, { write: (line: string) => void logLines.push(JSON.parse(line) as LogLine) });
      await drain(createWorker({ db, config: testConfig(), clock: new ManualClock(Date.now()), log, metrics: new Metrics(), handlers }));
    } finally {
      await db.close();
    }
  }, 180_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("a failed handler's attempt: number, start, duration, outcome, the error's first line and the stack's first frames; the next attempt only where one is due", async () => {
    const show = await runCli(['events', 'show', String(failing)], env);
    expect(show.code, show.stderr).toBe(0);
    const lines = show.stdout.split('\n');
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}status +failed$/));
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}next attempt +\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$/));
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}notify: failed, attempt 1, next attempt \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$/));
    expect(lines).toContainEqual(
      expect.stringMatching(/^ {4}#1 {2}\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ {2}failed in \d+ ms: payment API refused the charge \(\+1 more line\)$/),
    );
    expect(show.stdout).not.toContain('request id req_123'); // the error's other lines are in --json
    const frames = lines.filter((line) => /^ {9}(at |… )/.test(line));
    expect(frames).toEqual([
      '         at step0 (/app/handlers/notify.ts:1:5)',
      '         at step1 (/app/handlers/notify.ts:2:5)',
      '         at step2 (/app/handlers/notify.ts:3:5)',
      '         … 5 more frames (--json has the whole stack)',
    ]);
    // the handler that succeeded: its attempt, and no next one
    expect(lines).toContain('  record: processed, attempt 1');
    expect(lines).toContainEqual(expect.stringMatching(/^ {4}#1 {2}\S+ \S+ {2}processed in \d+ ms$/));

    const json = await runCli(['events', 'show', String(failing), '--json'], env);
    const { deliveries } = JSON.parse(json.stdout) as { deliveries: Array<{ handler: string; history: Array<{ error: string; stack: string }> }> };
    const notify = deliveries.find((d) => d.handler === 'notify')!;
    expect(notify.history[0]!.error).toContain('request id req_123');
    expect(notify.history[0]!.stack.split('\n')).toHaveLength(8);
  });

  it("the worker's log line of the failed attempt carries the error and its stack (bounded, the project's frames first)", () => {
    const failed = logLines.find((line) => line.msg === 'delivery failed' && line.handler === 'notify');
    expect(failed?.err?.message).toBe('payment API refused the charge\nrequest id req_123');
    expect(failed?.err?.stack?.split('\n')).toEqual(Array.from({ length: 8 }, (_, i) => `at step${i} (/app/handlers/notify.ts:${i + 1}:5)`));
  });

  it('a processed event has no next attempt', async () => {
    const show = await runCli(['events', 'show', String(processed)], env);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(/^ {2}status +processed$/m);
    expect(show.stdout).toMatch(/^ {2}processed +\d{4}-/m);
    expect(show.stdout).not.toContain('next');
  });
});
