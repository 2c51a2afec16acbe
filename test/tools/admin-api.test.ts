import { beforeAll, describe, expect, it } from 'vitest';
import { pgliteOnly, useTestDatabase } from '../helpers/db.js';
import { SECRETS } from '../helpers/config.js';
import { createDefaultHandlers } from '../../src/inbox/handlers/defaults.js';
import { seedDeliveries } from '../inbox/fixtures.js';
import { createToolsApp, postSample, type ToolsApp } from './tools-app.js';

const auth = { authorization: `Bearer ${SECRETS.admin}` };

describe.each(pgliteOnly())('admin API ($name)', (kind) => {
  const testDb = useTestDatabase(kind);
  let tools: ToolsApp;
  beforeAll(async () => {
    tools = await createToolsApp(testDb.db);
  });

  const get = (path: string, headers: Record<string, string> = auth) => tools.app.request(path, { headers });
  const post = (path: string, body?: unknown) =>
    tools.app.request(path, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  it('refuses a missing or wrong token with 401 unauthorized', async () => {
    for (const headers of [{} as Record<string, string>, { authorization: 'Bearer nope' }, { authorization: SECRETS.admin }, { authorization: 'Bearer ' }]) {
      const res = await get('/api/events', headers);
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: { code: 'unauthorized' } });
    }
  });

  it('is closed with 503 not_configured when ADMIN_TOKEN is unset, whatever is sent', async () => {
    const closed = await createToolsApp(testDb.db, { ADMIN_TOKEN: '' });
    for (const headers of [{} as Record<string, string>, { authorization: 'Bearer ' }, { authorization: `Bearer ${SECRETS.admin}` }]) {
      const res = await closed.app.request('/api/events', { headers });
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({ error: { code: 'not_configured' } });
    }
  });

  it('lists events newest first with filters and cursor pagination', async () => {
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push(await postSample(tools, 'auth', 'user.created'));
    const paymentId = await postSample(tools, 'payments', 'invoice.paid');

    const first = (await (await get('/api/events?source=auth&limit=2')).json()) as { events: Array<{ id: number; source: string }>; nextCursor: string };
    expect(first.events.map((e) => e.id)).toEqual([ids[4], ids[3]]);
    const second = (await (await get(`/api/events?source=auth&limit=2&cursor=${first.nextCursor}`)).json()) as typeof first;
    expect(second.events.map((e) => e.id)).toEqual([ids[2], ids[1]]);
    const last = (await (await get(`/api/events?source=auth&limit=2&cursor=${second.nextCursor}`)).json()) as { events: unknown[]; nextCursor: string | null };
    expect(last.events).toHaveLength(1);
    expect(last.nextCursor).toBeNull();

    const byType = (await (await get('/api/events?type=invoice.paid')).json()) as { events: Array<{ id: number }> };
    expect(byType.events.map((e) => e.id)).toEqual([paymentId]);
    const byStatus = (await (await get('/api/events?status=dead')).json()) as { events: unknown[] };
    expect(byStatus.events).toEqual([]);
  });

  it('answers 400 bad_request naming a bad filter', async () => {
    const res = await get('/api/events?status=lost');
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/status/);
    expect((await get('/api/events?limit=0')).status).toBe(400);
    expect((await get('/api/events?cursor=abc')).status).toBe(400);
  });

  it('shows one event with its payload, 404 for an unknown id, 400 for a bad one', async () => {
    const id = await postSample(tools, 'payments', 'checkout.session.completed');
    const res = await get(`/api/events/${id}`);
    expect(res.status).toBe(200);
    const { event } = (await res.json()) as { event: { payload: { type: string }; attempts: number; status: string } };
    expect(event.payload.type).toBe('checkout.session.completed');
    expect(event).toMatchObject({ status: 'pending', attempts: 0 });
    expect((await get('/api/events/999999')).status).toBe(404);
    expect((await get('/api/events/abc')).status).toBe(400);
  });

  it('counts events by status', async () => {
    await postSample(tools, 'database', 'INSERT');
    const { counts } = (await (await get('/api/events/counts')).json()) as { counts: Record<string, number> };
    expect(counts).toMatchObject({ pending: 1, dead: 0, processed: 0 });
  });

  it('replays one event and all dead events', async () => {
    const a = await postSample(tools, 'auth', 'user.updated');
    const b = await postSample(tools, 'auth', 'user.deleted');
    await seedDeliveries(testDb.db, createDefaultHandlers(), 'dead');

    const one = await post(`/api/events/${a}/replay`);
    expect(one.status).toBe(200);
    expect(await one.json()).toMatchObject({ replayed: true, event: { id: a, status: 'pending', attempts: 0 } });

    const many = await post('/api/events/replay', { status: 'dead' });
    expect(await many.json()).toEqual({ replayed: 1 });
    const rows = await testDb.db.query<{ status: string }>('SELECT status FROM hookrun.webhook_events WHERE id = $1', [b]);
    expect(rows[0]?.status).toBe('pending');

    expect((await post('/api/events/424242/replay')).status).toBe(404);
    expect((await post('/api/events/replay', { status: 'running' })).status).toBe(400);
    expect((await post('/api/events/replay')).status).toBe(400);
  });

  it('lists cron jobs with schedule, next runs (UTC) and last run', async () => {
    await post('/api/cron/jobs/tick/run');
    const { jobs } = (await (await get('/api/cron/jobs')).json()) as {
      jobs: Array<{ name: string; schedule: string | null; nextRuns: string[]; lastRun: { status: string } | null }>;
    };
    const tick = jobs.find((j) => j.name === 'tick')!;
    expect(tick.schedule).toBe('0 1 * * *');
    expect(tick.nextRuns).toEqual(['2026-06-02T01:00:00.000Z', '2026-06-03T01:00:00.000Z', '2026-06-04T01:00:00.000Z']);
    expect(tick.lastRun?.status).toBe('succeeded');
    expect(jobs.find((j) => j.name === 'boom')).toMatchObject({ schedule: null, nextRuns: [], lastRun: null });
  });

  it('runs a job, recording the trigger, and lists runs with pagination', async () => {
    const ok = await post('/api/cron/jobs/tick/run?trigger=cli');
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ run: { job: 'tick', trigger: 'cli', status: 'succeeded' } });
    const failed = await post('/api/cron/jobs/boom/run');
    expect(await failed.json()).toMatchObject({ run: { job: 'boom', trigger: 'http', status: 'failed', error: expect.stringContaining('kaboom') } });
    expect((await post('/api/cron/jobs/nope/run')).status).toBe(404);
    expect((await post('/api/cron/jobs/tick/run?trigger=schedule')).status).toBe(400);

    const page = (await (await get('/api/cron/runs?limit=1')).json()) as { runs: Array<{ job: string }>; nextCursor: string };
    expect(page.runs.map((r) => r.job)).toEqual(['boom']);
    const next = (await (await get(`/api/cron/runs?limit=1&cursor=${page.nextCursor}`)).json()) as { runs: Array<{ job: string }>; nextCursor: string | null };
    expect(next.runs.map((r) => r.job)).toEqual(['tick']);
    expect(next.nextCursor).toBeNull();
    const byJob = (await (await get('/api/cron/runs?job=tick')).json()) as { runs: unknown[] };
    expect(byJob.runs).toHaveLength(1);
  });
});
