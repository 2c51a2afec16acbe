import { beforeAll, describe, expect, it } from 'vitest';
import { advanceReplays } from '../../src/replay/advance.js';
import { SECRETS } from '../helpers/config.js';
import { createPgliteDatabase, emptyTables, type TestDatabase } from '../helpers/db.js';
import { createDefaultHandlers } from '../../src/inbox/handlers/defaults.js';
import { seedDeliveries } from '../inbox/fixtures.js';
import { createToolsApp, postSample, type ToolsApp } from '../tools/tools-app.js';

const auth = { authorization: `Bearer ${SECRETS.admin}`, 'content-type': 'application/json' };

describe('bulk replay admin API (PGlite)', () => {
  let testDb: TestDatabase;
  let tools: ToolsApp;
  const ids: number[] = [];
  beforeAll(async () => {
    testDb = await createPgliteDatabase();
    tools = await createToolsApp(testDb.db);
    await emptyTables(testDb.db);
    for (let i = 0; i < 5; i++) ids.push(await postSample(tools, 'auth', 'user.created'));
    ids.push(await postSample(tools, 'payments', 'invoice.paid'));
    await seedDeliveries(testDb.db, createDefaultHandlers(), 'dead');
    return () => testDb.close();
  });

  const post = (path: string, body?: unknown) => tools.app.request(path, { method: 'POST', headers: auth, body: JSON.stringify(body ?? {}) });
  const get = (path: string) => tools.app.request(path, { headers: auth });
  const json = async (res: Response) => (await res.json()) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

  it('a dry run answers the plan and writes nothing', async () => {
    const res = await post('/api/replays', { status: 'dead', source: 'auth', dry_run: true });
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({
      dryRun: true,
      selection: { filter: { status: 'dead', source: 'auth' } },
      description: 'status dead, source auth',
      handler: null,
      plan: { matched: 5, replayable: 5, skipped: [], maxEventId: ids[5] },
    });
    expect(await testDb.db.query('SELECT 1 FROM hookrun.replay_batches')).toEqual([]);
    const statuses = await testDb.db.query<{ status: string }>('SELECT DISTINCT status FROM hookrun.webhook_events');
    expect(statuses).toEqual([{ status: 'dead' }]);
  });

  it('starts a replay (202), shows its progress and the audit, and records who asked', async () => {
    const res = await post('/api/replays', { status: 'dead', source: 'auth', rate: 2, actor: 'cli:ana@laptop' });
    expect(res.status).toBe(202);
    const { replay } = await json(res);
    expect(replay).toMatchObject({ total: 5, replayed: 0, rate: 2, status: 'running', actor: 'admin via api (cli:ana@laptop)', handler: null });
    for (let n = 0; n < 3; n++) {
      await advanceReplays(testDb.db, tools.clock, { yieldToInbox: false }); // no worker here: the rate alone (replay-yields.test.ts has the yield)
      tools.clock.advance(1000);
    }
    expect((await json(await get(`/api/replays/${replay.id}`))).replay).toMatchObject({ replayed: 5, status: 'done' });
    const payments = await testDb.db.query<{ status: string }>(`SELECT status FROM hookrun.webhook_events WHERE source = 'payments'`);
    expect(payments).toEqual([{ status: 'dead' }]);
    const audit = await json(await get('/api/replays'));
    expect(audit).toMatchObject({ replays: [{ id: replay.id, description: 'status dead, source auth' }], nextCursor: null });
  });

  it('ids, a handler and cancel; errors name what to fix', async () => {
    const started = await json(await post('/api/replays', { ids: [ids[5], 999_999], handler: 'stripe-mirror', rate: 1 }));
    expect(started.replay).toMatchObject({ total: 1, handler: 'stripe-mirror', selection: { ids: [ids[5], 999_999] }, actor: 'admin via api' });
    expect(started.plan.skipped).toEqual([expect.objectContaining({ reason: 'not_found', count: 1 })]);
    const cancel = await post(`/api/replays/${started.replay.id}/cancel`);
    expect(cancel.status).toBe(200);
    expect((await json(cancel)).replay).toMatchObject({ status: 'cancelled' });
    const again = await post(`/api/replays/${started.replay.id}/cancel`);
    expect(again.status).toBe(409);
    expect((await json(again)).error).toMatchObject({ code: 'conflict' });

    const cases: Array<[unknown, string, RegExp]> = [
      [{}, 'bad_request', /Say which events to replay/],
      [{ ids: [1], status: 'dead' }, 'bad_request', /ids or filters, not both/],
      [{ where: 'no operator here' }, 'bad_request', /payload search \(where\)/],
      [{ status: 'dead', rate: 5000 }, 'bad_request', /^rate: /],
      [{ from: 'yesterday' }, 'bad_request', /^from "yesterday" is not a date or time: write an ISO 8601 date or time/],
      [{ status: 'ignored' }, 'bad_request', /Nothing to replay/],
      [{ ids: Array.from({ length: 1001 }, (_, i) => i + 1) }, 'bad_request', /^ids: /],
    ];
    for (const [body, code, message] of cases) {
      const res = await post('/api/replays', body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      const { error } = await json(res);
      expect(error.code).toBe(code);
      expect(error.message).toMatch(message);
    }
    expect((await get('/api/replays/424242')).status).toBe(404);
    expect((await get('/api/replays/abc')).status).toBe(400);
  });
});
