import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { buildSample, signSample } from '../../src/webhooks/samples.js';
import { SECRETS } from '../helpers/config.js';
import { createPgliteDatabase, emptyTables, type TestDatabase } from '../helpers/db.js';
import { createDefaultHandlers } from '../../src/inbox/handlers/defaults.js';
import { seedDeliveries } from '../inbox/fixtures.js';
import { createToolsApp, postSample, type ToolsApp } from './tools-app.js';

const form = (fields: Record<string, string>) => ({ 'content-type': 'application/x-www-form-urlencoded', body: new URLSearchParams(fields).toString() });

describe('dashboard over HTTP', () => {
  let testDb: TestDatabase;
  let tools: ToolsApp;
  beforeAll(async () => {
    testDb = await createPgliteDatabase();
    tools = await createToolsApp(testDb.db);
  });
  afterAll(async () => testDb?.close());
  beforeEach(() => emptyTables(testDb.db));

  async function login(): Promise<string> {
    const { body, ...headers } = form({ token: SECRETS.admin });
    const res = await tools.app.request('/admin/login', { method: 'POST', headers, body });
    expect(res.status).toBe(303);
    const cookie = res.headers.get('set-cookie')!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie).toMatch(/Path=\/admin/);
    expect(cookie).not.toContain(SECRETS.admin);
    return cookie.split(';')[0]!;
  }

  async function csrfOf(cookie: string, path: string): Promise<string> {
    const html = await (await tools.app.request(path, { headers: { cookie } })).text();
    return /name="csrf" value="([^"]+)"/.exec(html)![1]!;
  }

  it('sends people without a session to the login page, and refuses a wrong token', async () => {
    const res = await tools.app.request('/admin');
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/admin/login');
    const { body, ...headers } = form({ token: 'not-the-token' });
    const wrong = await tools.app.request('/admin/login', { method: 'POST', headers, body });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('set-cookie')).toBeNull();
    expect(await wrong.text()).toContain('That is not the ADMIN_TOKEN');
  });

  it('does not accept the raw token, a forged or an expired cookie as a session', async () => {
    for (const value of [SECRETS.admin, '9999999999.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA']) {
      const res = await tools.app.request('/admin', { headers: { cookie: `hookrun_admin=${value}` } });
      expect(res.status).toBe(303);
    }
    const cookie = await login();
    tools.clock.advance(13 * 3600_000);
    try {
      expect((await tools.app.request('/admin', { headers: { cookie } })).status).toBe(303);
    } finally {
      tools.clock.advance(-13 * 3600_000);
    }
  });

  it('is closed (503) when ADMIN_TOKEN is unset', async () => {
    const closed = await createToolsApp(testDb.db, { ADMIN_TOKEN: '' });
    expect((await closed.app.request('/admin')).status).toBe(503);
    const { body, ...headers } = form({ token: '' });
    expect((await closed.app.request('/admin/login', { method: 'POST', headers, body })).status).toBe(503);
  });

  it('shows counts, events, cron jobs and runs; replays only with the CSRF token from the same origin', async () => {
    const id = await postSample(tools, 'auth', 'user.created');
    await seedDeliveries(testDb.db, createDefaultHandlers(), 'dead', { ids: [id] });
    const cookie = await login();
    const overview = await (await tools.app.request('/admin', { headers: { cookie } })).text();
    expect(await (await tools.app.request('/admin/events', { headers: { cookie } })).text()).toContain(`data-event-id="${id}"`);
    expect(overview).toMatch(/dead: <b>1<\/b>/);
    const jobs = await (await tools.app.request('/admin/jobs', { headers: { cookie } })).text();
    expect(jobs).toContain('/cron/tick');
    expect(jobs).toContain('2026-06-02 01:00:00Z');

    const csrf = await csrfOf(cookie, `/admin/events/${id}`);
    const noToken = form({});
    expect(
      (
        await tools.app.request(`/admin/events/${id}/replay`, {
          method: 'POST',
          headers: { cookie, 'content-type': noToken['content-type'] },
          body: noToken.body,
        })
      ).status,
    ).toBe(403);
    const good = form({ csrf });
    const crossSite = await tools.app.request(`/admin/events/${id}/replay`, {
      method: 'POST',
      headers: { cookie, origin: 'https://evil.example', 'content-type': good['content-type'] },
      body: good.body,
    });
    expect(crossSite.status).toBe(403);
    const rows = await testDb.db.query<{ status: string }>('SELECT status FROM hookrun.webhook_events WHERE id = $1', [id]);
    expect(rows[0]?.status).toBe('dead');

    const replay = await tools.app.request(`/admin/events/${id}/replay`, {
      method: 'POST',
      headers: { cookie, origin: 'http://localhost', 'content-type': good['content-type'] },
      body: good.body,
    });
    expect(replay.status).toBe(303);
    expect(replay.headers.get('location')).toBe(`/admin/events/${id}?replayed=1`);
    const after = await testDb.db.query<{ status: string }>('SELECT status FROM hookrun.webhook_events WHERE id = $1', [id]);
    expect(after[0]?.status).toBe('pending');
  });

  it('replays every dead event from the overview form', async () => {
    const a = await postSample(tools, 'payments', 'invoice.payment_failed');
    const b = await postSample(tools, 'payments', 'invoice.paid');
    await seedDeliveries(testDb.db, createDefaultHandlers(), 'dead');
    const cookie = await login();
    const csrf = await csrfOf(cookie, '/admin');
    const { body, ...headers } = form({ csrf, status: 'dead' });
    const res = await tools.app.request('/admin/events/replay', { method: 'POST', headers: { ...headers, cookie }, body });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/admin?replayed=2');
    const rows = await testDb.db.query<{ status: string }>('SELECT status FROM hookrun.webhook_events WHERE id = ANY($1) ORDER BY id', [[a, b]]);
    expect(rows.map((r) => r.status)).toEqual(['pending', 'pending']);
    const page = await (await tools.app.request('/admin?replayed=2', { headers: { cookie } })).text();
    expect(page).toContain('Replayed 2 event(s): they are back in the queue.');
  });

  it('runs a job now, pauses and resumes it from the cron table (CSRF-checked)', async () => {
    const cookie = await login();
    const csrf = await csrfOf(cookie, '/admin');
    const post = (path: string, token = csrf) => {
      const { body, ...headers } = form({ csrf: token });
      return tools.app.request(path, { method: 'POST', headers: { ...headers, cookie }, body });
    };
    expect((await post('/admin/cron/tick/run', 'forged')).status).toBe(403);
    const ran = await post('/admin/cron/tick/run');
    expect(ran.status).toBe(303);
    expect(ran.headers.get('location')).toBe('/admin/jobs/tick?job=tick&did=succeeded');
    expect(await (await tools.app.request(ran.headers.get('location')!, { headers: { cookie } })).text()).toContain('tick ran and succeeded.');
    const paused = await post('/admin/cron/tick/pause');
    expect(paused.headers.get('location')).toBe('/admin/jobs/tick?job=tick&did=paused');
    expect((await testDb.db.query('SELECT job FROM hookrun.cron_pauses')).length).toBe(1);
    const page = await (await tools.app.request('/admin/jobs/tick?job=tick&did=paused', { headers: { cookie } })).text();
    expect(page).toContain('tick is paused on every instance.');
    expect(page).toMatch(/<b>paused<\/b> since/);
    expect(page).toContain('data-action="resume"');
    await post('/admin/cron/tick/resume');
    expect((await testDb.db.query('SELECT job FROM hookrun.cron_pauses')).length).toBe(0);
    expect((await post('/admin/cron/nope/pause')).status).toBe(404);
    expect(await testDb.db.query<{ trigger: string; instance: string }>('SELECT trigger, instance FROM hookrun.cron_runs')).toEqual([
      { trigger: 'http', instance: expect.stringMatching(/:\d+$/) },
    ]);
  });

  it('replay feedback says what happened: still queued, processed, or dead again with the error', async () => {
    const id = await postSample(tools, 'payments', 'invoice.paid');
    await seedDeliveries(testDb.db, createDefaultHandlers(), 'dead', { ids: [id], error: 'malformed: no customer' });
    const cookie = await login();
    const csrf = await csrfOf(cookie, `/admin/events/${id}`);
    const { body, ...headers } = form({ csrf });
    const res = await tools.app.request(`/admin/events/${id}/replay`, { method: 'POST', headers: { ...headers, cookie }, body });
    expect(res.headers.get('location')).toBe(`/admin/events/${id}?replayed=1`);
    const read = async () => (await tools.app.request(`/admin/events/${id}?replayed=1`, { headers: { cookie } })).text();
    expect(await read()).toContain('Replayed: back in the queue (now pending). Reload to see how it ends.');
    // the worker runs it again and it fails the same way
    await seedDeliveries(testDb.db, createDefaultHandlers(), 'dead', { ids: [id], error: 'malformed: no customer' });
    const again = await read();
    expect(again).toMatch(/<p class="flash error" data-tone="failure" role="alert">Replayed, but it ran again and is dead: malformed: no customer<\/p>/);
    await seedDeliveries(testDb.db, createDefaultHandlers(), 'processed', { ids: [id] });
    expect(await read()).toContain('Replayed: it ran again and is processed.');
  });

  it("charts the last hour per minute and lists an event's attempts (also in the admin API)", async () => {
    const before = tools.clock.now();
    tools.clock.set(Date.now()); // received_at is the database's clock
    onTestFinished(() => tools.clock.set(before));
    const id = await postSample(tools, 'payments', 'invoice.paid');
    await seedDeliveries(testDb.db, createDefaultHandlers(), 'pending', { ids: [id] });
    const at = new Date(tools.clock.now() - 120_000);
    await testDb.db.query(
      `INSERT INTO hookrun.event_attempts (event_id, attempt, handler, started_at, duration_ms, outcome, error)
       VALUES ($1, 1, 'stripe-mirror', $2, 12, 'failed', 'card store down'), ($1, 2, 'stripe-mirror', $3, 7, 'processed', NULL)`,
      [id, at, new Date(tools.clock.now() - 60_000)],
    );
    const cookie = await login();
    const overview = await (await tools.app.request('/admin', { headers: { cookie } })).text();
    expect(overview).toMatch(/<svg [^>]*role="img" aria-label="events received, [^:"]*: 1 pending, 0 processed, 0 ignored, 0 failed, 0 dead"/);
    const page = await (await tools.app.request(`/admin/events/${id}`, { headers: { cookie } })).text();
    expect(page).toMatch(
      /<div id="attempts">[\s\S]*<td class="num">1<\/td>[\s\S]*<td class="num">12<\/td><td><span class="status s-failed t-failure">failed<\/span><\/td><td class="wide error-text">card store down<\/td>/,
    );
    const api = (await (await tools.app.request(`/api/events/${id}`, { headers: { authorization: `Bearer ${SECRETS.admin}` } })).json()) as {
      history: Array<{ attempt: number; outcome: string }>;
    };
    expect(api.history.map((a) => [a.attempt, a.outcome])).toEqual([
      [1, 'failed'],
      [2, 'processed'],
    ]);
  });

  it('shows the mirror tables the handlers write, searchable, linked from the overview', async () => {
    const cookie = await login();
    expect(await (await tools.app.request('/admin/mirrors', { headers: { cookie } })).text()).toContain('<a href="/admin/mirror/users">users</a>');
    const empty = await (await tools.app.request('/admin/mirror/users', { headers: { cookie } })).text();
    expect(empty).toContain('No rows yet. Send one with <code>hookrun send --story</code>');
    await testDb.db.query(
      `INSERT INTO hookrun.users (id, email, first_name, last_name, source_updated_at) VALUES ('user_a', 'ada@example.com', 'Ada', 'L', now()), ('user_b', 'bob@example.com', 'Bob', '<b>x</b>', now() - interval '1 day')`,
    );
    const page = await (await tools.app.request('/admin/mirror/users', { headers: { cookie } })).text();
    expect(page.indexOf('user_a')).toBeLessThan(page.indexOf('user_b')); // most recently changed first
    expect(page).toContain('&lt;b&gt;x&lt;/b&gt;');
    const found = await (await tools.app.request('/admin/mirror/users?search=ada', { headers: { cookie } })).text();
    expect(found).toContain('ada@example.com');
    expect(found).not.toContain('bob@example.com');
    expect((await tools.app.request('/admin/mirror/pg_authid', { headers: { cookie } })).status).toBe(404);
  });

  it('escapes everything that came from outside', async () => {
    const event = buildSample('auth', '<img src=x onerror=alert(1)>', { data: { first_name: '</pre><script>alert(2)</script>' } }, tools.clock.now());
    const body = JSON.stringify(event);
    const res = await tools.app.request('/webhooks/auth', {
      method: 'POST',
      body,
      headers: signSample('auth', body, tools.config, { nowMs: tools.clock.now() }),
    });
    const { id } = (await res.json()) as { id: number };
    const cookie = await login();
    const list = await (await tools.app.request('/admin/events', { headers: { cookie } })).text();
    expect(list).not.toContain('<img src=x');
    expect(list).toContain('&lt;img src=x onerror=alert(1)&gt;');
    const detail = await tools.app.request(`/admin/events/${id}`, { headers: { cookie } });
    expect(detail.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await detail.text();
    expect(html).not.toContain('<script>');
    expect(html).toContain('&lt;/pre&gt;&lt;script&gt;alert(2)&lt;/script&gt;');
  });

  it('without an address (as inside a Next.js route) checks the token first: throttles wrong logins (429, Retry-After) but never locks out the right token', async () => {
    const throttled = await createToolsApp(testDb.db); // its own throttle and clock
    const attempt = (token: string) => {
      const { body, ...headers } = form({ token });
      return throttled.app.request('/admin/login', { method: 'POST', headers, body });
    };
    for (let i = 0; i < 10; i++) expect((await attempt(`wrong-${i}`)).status).toBe(401);
    const blocked = await attempt('wrong-10');
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBe(60);
    expect(await blocked.text()).toContain('Too many wrong or missing credentials');
    expect((await attempt(SECRETS.admin)).status).toBe(303);
    throttled.clock.advance(60_000);
    expect((await attempt('wrong-again')).status).toBe(401);
  });

  it('every login is its own session: two in the same second get different cookies, and logging out one keeps the other', async () => {
    const first = await login();
    const second = await login(); // same clock second
    expect(second).not.toBe(first);
    const csrf = await csrfOf(first, '/admin');
    const { body, ...headers } = form({ csrf });
    expect(
      (await tools.app.request('/admin/logout', { method: 'POST', headers: { ...headers, cookie: first, origin: 'http://localhost' }, body })).status,
    ).toBe(303);
    expect((await tools.app.request('/admin', { headers: { cookie: first } })).status).toBe(303);
    expect((await tools.app.request('/admin', { headers: { cookie: second } })).status).toBe(200);
  });

  it('a logged-out session cookie stops working, on this instance and on another one on the same database', async () => {
    const cookie = await login();
    expect((await tools.app.request('/admin', { headers: { cookie } })).status).toBe(200);
    const csrf = await csrfOf(cookie, '/admin');
    const { body, ...headers } = form({ csrf });
    const out = await tools.app.request('/admin/logout', { method: 'POST', headers: { ...headers, cookie, origin: 'http://localhost' }, body });
    expect(out.status).toBe(303);
    const again = await tools.app.request('/admin', { headers: { cookie } }); // a copy of the cookie, kept after logout
    expect([again.status, again.headers.get('location')]).toEqual([303, '/admin/login']);
    const other = await createToolsApp(testDb.db);
    expect((await other.app.request('/admin', { headers: { cookie } })).status).toBe(303);
  });
});
