import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import type { Database, Queryable } from '../../src/db/database.js';
import { parseFlowOptions } from '../../src/flow/options.js';
import { HandlerRegistry } from '../../src/deliveries/registry.js';
import { databaseKinds, emptyTables, useTestDatabase } from '../helpers/db.js';
import { storeEvent, testWorker } from './fixtures.js';

/** The error of an instance that has died: every query from the step it died at on fails, and what it had begun rolls back. */
class Killed extends Error {}

/**
 * A database handle that dies at its `killAt`-th statement (counting every
 * statement, inside transactions too): that statement and every later one
 * throw, so its open transaction rolls back, as a process killed there would
 * leave it. `statements` counts what ran.
 */
function mortal(db: Database, killAt: number): Database & { statements: number } {
  let statements = 0;
  const step = () => {
    statements += 1;
    if (statements >= killAt) throw new Killed(`killed at statement ${killAt}`);
  };
  const counted = (q: Queryable): Queryable => ({
    async query<T>(text: string, params?: unknown[]) {
      step();
      return q.query<T>(text, params);
    },
  });
  return {
    ...db,
    get statements() {
      return statements;
    },
    query: counted(db).query,
    transaction: <T>(fn: (tx: Queryable) => Promise<T>) => db.transaction((tx) => fn(counted(tx))),
    listen: async () => async () => undefined,
  } as Database & { statements: number };
}

/**
 * Two inline handlers and one under flow control on one event type; each
 * writes a mark in its delivery's transaction (a savepoint), so a mark that
 * committed is a run whose outcome committed with it.
 */
function markingHandlers() {
  const registry = new HandlerRegistry();
  const mark = (name: string) => async (ctx: { db: Queryable; event: { id: number } }) => {
    await ctx.db.query('INSERT INTO kill_marks (handler, event_id) VALUES ($1, $2)', [name, ctx.event.id]);
  };
  registry.on('test', 'order', mark('first'), { name: 'first', isolated: true });
  registry.on('test', 'order', mark('second'), { name: 'second', isolated: true });
  registry.on('test', 'order', mark('limited'), {
    name: 'limited',
    isolated: true,
    flow: parseFlowOptions({ concurrency: { limit: 1, key: (e: { key: string }) => e.key } }),
  });
  return registry;
}

describe.each(databaseKinds())('an instance killed at every step of a claim, a run and a settle, on $name', (kind) => {
  const testDb = useTestDatabase(kind);

  async function scenario(killAt: number): Promise<{ statements: number }> {
    const { db } = testDb;
    await emptyTables(db);
    await db.query('CREATE TABLE IF NOT EXISTS kill_marks (handler text, event_id bigint)');
    await db.query('TRUNCATE kill_marks');
    const handlers = markingHandlers();
    for (const key of ['a', 'b', 'a']) await storeEvent(db, 'test', 'order', { key });
    const clock = new ManualClock(Date.now());
    const dying = mortal(db, killAt);
    const first = testWorker(dying, { handlers, clock, options: { flowHorizonMs: 0 } }).worker;
    try {
      for (let round = 0; round < 20 && (await first.runOnce()) > 0; round++);
    } catch (error) {
      if (!(error instanceof Killed)) throw error;
    }
    // Another instance (or this one restarted) once every lease the dead one held has run out.
    clock.advance(120_000);
    const second = testWorker(db, { handlers, clock, options: { flowHorizonMs: 0 } }).worker;
    for (let round = 0; round < 20 && (await second.runOnce()) > 0; round++);
    return { statements: dying.statements };
  }

  async function expectAllDone(killAt: number): Promise<void> {
    const { db } = testDb;
    const where = `killed at statement ${killAt}`;
    const events = await db.query<{ status: string }>('SELECT status FROM hookrun.webhook_events ORDER BY id');
    expect(
      events.map((e) => e.status),
      where,
    ).toEqual(['processed', 'processed', 'processed']);
    expect(await db.query('SELECT event_id FROM hookrun.new_events'), where).toEqual([]);
    const open = await db.query(`SELECT handler, status FROM hookrun.handler_deliveries WHERE status <> 'processed'`);
    expect(open, where).toEqual([]);
    const marks = await db.query<{ handler: string; n: number }>('SELECT handler, event_id, count(*)::int AS n FROM kill_marks GROUP BY 1, 2');
    expect(marks, where).toHaveLength(9); // three handlers, three events: every one ran
    // A run whose transaction did not commit left no mark: each handler's writes committed once. On the embedded
    // database a flow-controlled handler runs outside its settle's transaction (one session), so it may run twice.
    const once = marks.filter((m) => kind.name === 'postgres' || m.handler !== 'limited');
    expect(
      once.filter((m) => m.n !== 1),
      where,
    ).toEqual([]);
  }

  it('the next instance finishes every event, runs every handler, and commits each run once', async () => {
    const clean = await scenario(Number.POSITIVE_INFINITY);
    await expectAllDone(Number.POSITIVE_INFINITY);
    expect(clean.statements).toBeGreaterThan(10);
    for (let killAt = 1; killAt <= clean.statements; killAt++) {
      await scenario(killAt);
      await expectAllDone(killAt);
    }
  }, 240_000);
});
