import { describe, expect, it } from 'vitest';
import type { HandlerOverview } from '../../src/inbox/handler-overview.js';
import { SECRETS } from '../helpers/config.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { drain, eventRow, storeEvent, waitFor } from '../inbox/fixtures.js';
import { gate } from './support.js';
import { handlersWith, operatorApp, recorder } from './operator-app.js';

const key = (event: { key: string }) => event.key;
type Listed = Omit<HandlerOverview, 'pausedAt'> & { pausedAt: string | null };
const form = (fields: Record<string, string>) => ({ 'content-type': 'application/x-www-form-urlencoded', body: new URLSearchParams(fields).toString() });

describe.each(databaseKinds())('handlers for operators on $name', (kind) => {
  const testDb = useTestDatabase(kind);
  const store = (type: string, k: string) => storeEvent(testDb.db, 'test', type, { key: k });
  const listed = async (api: (m: 'GET', p: string) => Promise<Response>) => ((await (await api('GET', '/handlers')).json()) as { handlers: Listed[] }).handlers;

  it('the admin routes need ADMIN_TOKEN: 401 unauthorized without it', async () => {
    const { app } = await operatorApp(testDb.db, handlersWith({ h: {} }, recorder()));
    for (const [method, path] of [
      ['GET', '/api/handlers'],
      ['POST', '/api/handlers/h/pause'],
      ['POST', '/api/handlers/h/resume'],
    ] as const) {
      const res = await app.request(path, { method });
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
    }
    const wrong = await app.request('/api/handlers/h/pause', { method: 'POST', headers: { authorization: 'Bearer nope' } });
    expect(wrong.status).toBe(401);
    expect((await testDb.db.query('SELECT handler FROM hookrun.handler_controls')).length).toBe(0);
  });

  it('pause holds the handler on every claim (its events wait), survives a new app, and resume lets them run', async () => {
    const calls = recorder();
    const handlers = handlersWith({ h: { concurrency: { limit: 2, key } }, other: {} }, calls);
    const { api, worker } = await operatorApp(testDb.db, handlers);
    expect(await (await api('POST', '/handlers/h/pause')).json()).toEqual({ handler: 'h', paused: true, changed: true });
    expect(await (await api('POST', '/handlers/h/pause')).json()).toEqual({ handler: 'h', paused: true, changed: false });
    const [a, b, o] = [await store('h', 'a'), await store('h', 'b'), await store('other', 'x')];
    await drain(worker);
    expect(calls.seen).toEqual([{ handler: 'other', eventId: o }]);
    for (const id of [a, b]) expect((await eventRow(testDb.db, id)).status).toBe('pending');

    const restarted = await operatorApp(testDb.db, handlers); // another instance, or this one after a restart
    await drain(restarted.worker);
    expect(calls.seen).toHaveLength(1);
    const h = (await listed(restarted.api)).find((x) => x.name === 'h')!;
    expect(h).toMatchObject({ flow: 'concurrency 2 per key', registered: true, paused: true, running: 0, failed: 0, parked: 0, dead: 0 });
    expect(h.waiting).toEqual({ ready: 0, concurrency: 0, rate: 0, debounce: 0, batch: 0, paused: 2 });
    expect(h.pausedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(h.topWaitingKeys).toEqual([
      { key: 'a', waiting: 1 },
      { key: 'b', waiting: 1 },
    ]);

    expect(await (await restarted.api('POST', '/handlers/h/resume')).json()).toEqual({ handler: 'h', paused: false, changed: true });
    await drain(restarted.worker);
    for (const id of [a, b]) expect((await eventRow(testDb.db, id)).status).toBe('processed');
    expect(await (await restarted.api('POST', '/handlers/h/resume')).json()).toEqual({ handler: 'h', paused: false, changed: false });
    expect((await listed(restarted.api)).find((x) => x.name === 'h')).toMatchObject({ paused: false, pausedAt: null, topWaitingKeys: [] });
  });

  it('lists each handler with its flow options and its waiting deliveries by reason', async () => {
    const calls = recorder();
    const handlers = handlersWith(
      {
        limited: { concurrency: { limit: 1, key } },
        paced: { rateLimit: { limit: 1, period: '1m' } },
        quiet: { debounce: { period: '5s', key, maxWait: '1m' } },
        grouped: { batch: { maxSize: 10, maxWait: '1m' } },
        flaky: { concurrency: { limit: 5 } },
        plain: {},
      },
      calls,
    );
    calls.fail = (handler) => handler === 'flaky';
    const { api, worker } = await operatorApp(testDb.db, handlers);
    for (const k of ['a', 'a', 'a']) await store('limited', k);
    for (const k of ['p1', 'p2']) await store('paced', k);
    await store('quiet', 'q');
    await store('grouped', 'g');
    await store('flaky', 'f');
    await worker.runOnce(); // the inbox claim writes the deliveries
    const held = gate();
    calls.gate = held.promise;
    const round = worker.runOnce();
    await waitFor(() => ['limited', 'paced', 'flaky'].every((name) => calls.seen.some((s) => s.handler === name)));
    const byName = Object.fromEntries((await listed(api)).map((h) => [h.name, h]));
    held.open();
    await round;

    expect(Object.keys(byName)).toEqual(['flaky', 'grouped', 'limited', 'paced', 'plain', 'quiet']);
    expect(byName.grouped).toMatchObject({ flow: 'batch 10 within 1m', running: 0, waiting: { batch: 1, rate: 0 } });
    expect(byName.limited).toMatchObject({
      flow: 'concurrency 1 per key',
      running: 1,
      waiting: { concurrency: 2 },
      topWaitingKeys: [{ key: 'a', waiting: 2 }],
    });
    expect(byName.paced).toMatchObject({ flow: 'rate 1/1m', running: 1, waiting: { ready: 0, rate: 1 } });
    expect(byName.quiet).toMatchObject({ flow: 'debounce 5s (max 1m)', running: 0, waiting: { debounce: 1 } });
    expect(byName.plain).toMatchObject({ flow: null, running: 0, waiting: { ready: 0, paused: 0 } });

    const after = Object.fromEntries((await listed(api)).map((h) => [h.name, h]));
    expect(after.flaky).toMatchObject({ flow: 'concurrency 5', running: 0, failed: 1 });
  });

  it("events?parked=true lists the events an order: 'key' handler parked; the handler counts them", async () => {
    const calls = recorder();
    calls.fail = (_handler, id) => id === poison;
    const { api, worker } = await operatorApp(testDb.db, handlersWith({ ordered: { order: 'key', key } }, calls), { MAX_ATTEMPTS: '1' });
    const poison = await store('ordered', 'a');
    const fine = await store('ordered', 'a');
    await drain(worker);
    const page = (query: string) => api('GET', `/events${query}`);
    const parked = (await (await page('?parked=true')).json()) as { events: Array<{ id: number; status: string }> };
    expect(parked.events.map((e) => e.id)).toEqual([poison]);
    expect(((await (await page('?parked=false')).json()) as { events: unknown[] }).events).toHaveLength(2);
    expect(((await (await page('?parked=true&status=processed')).json()) as { events: unknown[] }).events).toEqual([]);
    expect((await page('?parked=yes')).status).toBe(400);
    expect((await eventRow(testDb.db, fine)).status).toBe('processed');
    expect((await listed(api))[0]).toMatchObject({ name: 'ordered', flow: 'order by key', parked: 1 });
  });

  it('refuses an unknown name with 404, naming the nearest handler and every one', async () => {
    const { api } = await operatorApp(testDb.db, handlersWith({ 'send-welcome': {}, billing: {} }, recorder()));
    for (const action of ['pause', 'resume']) {
      const res = await api('POST', `/handlers/send-welcom/${action}`);
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({
        error: {
          code: 'not_found',
          message:
            'No handler "send-welcom". Did you mean "send-welcome"? Handlers: billing, send-welcome. A handler is a file handlers/<name>.ts in your project, or a built-in one.',
        },
      });
    }
    expect((await testDb.db.query('SELECT handler FROM hookrun.handler_controls')).length).toBe(0);
  });

  it('console: a Handlers page (escaped) whose Pause and Resume buttons work, CSRF-checked', async () => {
    const { app, worker } = await operatorApp(
      testDb.db,
      handlersWith({ h: { rateLimit: { limit: 100, period: '1s' }, order: 'key', key }, 'x<b>y': {} }, recorder()),
    );
    const { body, ...headers } = form({ token: SECRETS.admin });
    const cookie = (await app.request('/admin/login', { method: 'POST', headers, body })).headers.get('set-cookie')!.split(';')[0]!;
    const overview = async (path = '/admin') => (await app.request(path, { headers: { cookie } })).text();
    const first = await overview('/admin/handlers');
    expect(first).toContain('<table id="handlers">');
    expect(first).toContain('rate 100/1s · order by key');
    expect(first).toContain('x&lt;b&gt;y');
    expect(first).not.toContain('x<b>y');
    expect(first).toContain('action="/admin/handlers/x%3Cb%3Ey/pause"');
    const csrf = /name="csrf" value="([^"]+)"/.exec(first)![1]!;
    const post = (path: string, token = csrf) => {
      const f = form({ csrf: token });
      return app.request(path, { method: 'POST', headers: { 'content-type': f['content-type'], cookie }, body: f.body });
    };

    expect((await post('/admin/handlers/h/pause', 'forged')).status).toBe(403);
    expect(await app.request('/admin/handlers/h/pause', { method: 'POST' })).toHaveProperty('status', 303); // no session: to the login page
    const paused = await post('/admin/handlers/h/pause');
    expect(paused.status).toBe(303);
    expect(paused.headers.get('location')).toBe('/admin/handlers?handler=h&did=paused');
    await storeEvent(testDb.db, 'test', 'h', { key: 'a' });
    await drain(worker);
    const page = await overview(paused.headers.get('location')!);
    expect(page).toContain('h is paused on every instance: its deliveries wait until resumed.');
    expect(page).toMatch(/<tr data-handler="h">.*<b>paused<\/b> since/s);
    expect(page).toContain('1: paused 1');
    expect(page).toContain('most waiting: a (1)');
    expect(page).toContain('action="/admin/handlers/h/resume"');
    expect((await post('/admin/handlers/h/resume')).headers.get('location')).toBe('/admin/handlers?handler=h&did=resumed');
    expect(await testDb.db.query('SELECT handler, paused FROM hookrun.handler_controls')).toEqual([{ handler: 'h', paused: false }]);
    // A parked delivery: counted in the table, linked to the events list filtered to it.
    await testDb.db.query(`UPDATE hookrun.handler_deliveries SET status = 'parked' WHERE handler = 'h'`);
    const withParked = await overview('/admin/handlers');
    expect(withParked).toMatch(/<tr data-handler="h">.*<a href="\/admin\/events\?handler=h&(amp;)?parked=1">1<\/a>/s);
    const parkedList = await overview('/admin/events?handler=h&parked=1');
    expect(parkedList).toContain('Only events with a parked delivery');
    expect(parkedList.match(/data-event-id=/g)).toHaveLength(1);
    expect((await overview('/admin/events?parked=1&status=processed')).match(/data-event-id=/g) ?? []).toHaveLength(0);
    const missing = await post('/admin/handlers/nope/pause');
    expect(missing.status).toBe(404);
    expect(await missing.text()).toContain('No handler &quot;nope&quot;.');
  });
});
