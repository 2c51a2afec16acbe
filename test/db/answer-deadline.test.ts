import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withDeadline } from '../../src/deadline.js';
import { EventWriter } from '../../src/db/event-writer.js';
import { NotConfirmedError } from '../../src/db/event-write-errors.js';
import { createPostgresDatabase, type TestDatabase } from '../helpers/db.js';

/** Keep this thread busy for `ms`, as a long garbage collection or a starved process does: no timer, socket or message is read meanwhile. */
function stall(ms: number, until: () => boolean = () => true): void {
  const end = performance.now() + ms;
  const bound = end + 10_000; // a thread that never answers does not hang the run
  while (performance.now() < end || (!until() && performance.now() < bound));
}

/**
 * A thread that answers each message at once, unless it is `silent` (what the database's thread and socket are to
 * this one), and sets `answered[0]` once its answer is posted: the stall can last until then, however busy the machine.
 */
function echoThread(answered: Int32Array): Worker {
  return new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     parentPort.on('message', (m) => { if (m !== 'silent') { parentPort.postMessage(m); Atomics.store(workerData, 0, 1); } });`,
    { eval: true, workerData: answered },
  );
}

describe('a deadline judges the answer, not this thread: an answer that arrived while the thread stalled wins', () => {
  const answered = new Int32Array(new SharedArrayBuffer(4));
  let thread: Worker;
  beforeAll(async () => {
    thread = echoThread(answered);
    await new Promise((resolve) => thread.once('online', resolve));
  });
  afterAll(() => thread?.terminate());

  const ask = (message: string) => new Promise((resolve) => thread.once('message', resolve).postMessage(message));
  /**
   * Start `asking` and stall in one turn of the event loop (its check phase, so no message is being read): for
   * 300 ms, and on until the thread has posted its answer when one is `expected`.
   */
  const askedThenStalled = <T>(asking: () => Promise<T>, expected: boolean) =>
    new Promise<{ answer: Promise<T> }>((resolve) =>
      setImmediate(() => {
        Atomics.store(answered, 0, 0);
        const answer = asking();
        answer.catch(() => undefined); // judged by the test once the stall is over
        stall(300, () => !expected || Atomics.load(answered, 0) === 1);
        resolve({ answer });
      }),
    );

  it('withDeadline: answered during a stall longer than the deadline, it resolves', async () => {
    // Asked, then busy: the thread answers meanwhile, and the timer is due before this thread reads the answer.
    const { answer } = await askedThenStalled(() => withDeadline(ask('pong'), 50, () => new Error('late')), true);
    await expect(answer).resolves.toBe('pong');
  });

  it('withDeadline: no answer at all still rejects after the stall', async () => {
    const { answer } = await askedThenStalled(() => withDeadline(ask('silent'), 50, () => new Error('late')), false);
    await expect(answer).rejects.toThrow('late');
  });
});

describe.skipIf(!process.env.TEST_DATABASE_URL)('the inbox writer on PostgreSQL, its process stalled past DB_TIMEOUT_MS after the insert was sent', () => {
  let handle: TestDatabase;
  beforeAll(async () => {
    handle = await createPostgresDatabase();
  });
  afterAll(() => handle?.close());

  const event = (key: string) => ({ source: 'payments', key, type: 'invoice.paid', payloadJson: JSON.stringify({ id: key }) });

  it('answers the event as stored (it is), not "not confirmed"', async () => {
    const writer = new EventWriter(handle.db);
    await writer.write(event('evt_warm')); // a pooled connection and the statement ready: the next insert is one round trip
    const written = writer.write(event('evt_stalled'), 100);
    setImmediate(() => stall(1_500)); // after the writer's own turn, which sends the insert; PostgreSQL answers meanwhile
    const outcome = await written.catch((error: unknown) => error);
    expect(outcome).not.toBeInstanceOf(NotConfirmedError);
    expect(outcome).toMatchObject({ duplicate: false });
    expect(await handle.db.query(`SELECT key FROM hookrun.webhook_events WHERE key = 'evt_stalled'`)).toHaveLength(1);
  });
});
