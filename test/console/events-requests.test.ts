import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SECRETS } from '../helpers/config.js';
import { createPostgresDatabase, type TestDatabase } from '../helpers/db.js';
import { runCli } from '../helpers/spawn-hookrun.js';
import { buildSample, signSample } from '../../src/webhooks/samples.js';
import { createToolsApp, type ToolsApp } from '../tools/tools-app.js';

const auth = { authorization: `Bearer ${SECRETS.admin}` };
/** Credentials a sender or a proxy might add: none may be kept or shown. */
const EXTRA = {
  authorization: 'Bearer sk_live_never_show_this_0123456789',
  cookie: 'session=cookie-value-never-shown',
  'x-api-key': 'api-key-value-never-shown',
  'x-forwarded-for': '203.0.113.7',
};

interface ApiEvent {
  event: { id: number };
  request: { headers: Record<string, string>; body: string; verification: string } | null;
}

describe.skipIf(!process.env.TEST_DATABASE_URL)(
  'the request each event came in, and the events search (admin API, console, CLI; PostgreSQL)',
  { timeout: 120_000 },
  () => {
    let testDb: TestDatabase;
    let tools: ToolsApp;
    const post = async (source: string, body: string, headers: Record<string, string>) => {
      const res = await tools.app.request(`/webhooks/${source}`, { method: 'POST', body, headers });
      expect(res.status, await res.clone().text()).toBe(200);
      return (await res.json()) as { id: number; duplicate: boolean };
    };
    const api = async (id: number) => ({ text: await (await tools.app.request(`/api/events/${id}`, { headers: auth })).text() });
    const list = async (query: string) => {
      const res = await tools.app.request(`/api/events?${query}`, { headers: auth });
      return { status: res.status, body: (await res.json()) as { events?: Array<{ id: number }>; error?: { code: string; message: string } } };
    };

    beforeAll(async () => {
      testDb = await createPostgresDatabase();
      tools = await createToolsApp(testDb.db);
    }, 180_000);
    afterAll(async () => testDb?.close());

    it('Stripe: headers with the signature and credentials masked, the body as sent (stored once), and what verified it', async () => {
      // Indented, as some senders write it: the payload keeps these very bytes, and the request does not store them again.
      const body = JSON.stringify(buildSample('payments', 'invoice.paid', undefined, tools.clock.now()), null, 2);
      const signature = Stripe.webhooks.generateTestHeaderString({
        payload: body,
        secret: SECRETS.payments,
        timestamp: Math.floor(tools.clock.now() / 1000) - 3,
      });
      const { id } = await post('payments', body, { 'content-type': 'application/json', 'stripe-signature': signature, ...EXTRA });
      const { text } = await api(id);
      const { request } = JSON.parse(text) as ApiEvent;
      expect(request!.body).toBe(body);
      const [kept] = await testDb.db.query<{ body: string | null; payload: string }>(
        `SELECT r.body, e.payload::text AS payload FROM hookrun.event_requests r JOIN hookrun.webhook_events e ON e.id = r.event_id WHERE r.event_id = $1`,
        [id],
      );
      expect(kept).toEqual({ body: null, payload: body });
      expect(request!.verification).toBe('stripe: Stripe-Signature v1 matched, signed 3 s before receipt');
      expect(request!.headers['stripe-signature']).toBe(`[masked, ${signature.length} chars]`);
      expect(request!.headers['x-forwarded-for']).toBe('203.0.113.7');
      for (const name of ['authorization', 'cookie', 'x-api-key'] as const) expect(request!.headers[name]).toBe(`[masked, ${EXTRA[name].length} chars]`);
      const secrets = [
        signature,
        signature.split('v1=')[1]!,
        EXTRA.authorization,
        'sk_live_never_show_this',
        'cookie-value-never-shown',
        'api-key-value-never-shown',
      ];
      const cookie = await login();
      const page = await (await tools.app.request(`/admin/events/${id}`, { headers: { cookie } })).text();
      expect(page).toContain('stripe: Stripe-Signature v1 matched, signed 3 s before receipt');
      expect(page).toContain('[masked,');
      for (const secret of secrets) {
        expect(text).not.toContain(secret);
        expect(page).not.toContain(secret);
      }
    });

    it('Svix (Clerk) and GitHub: their signature headers masked, each verification said', async () => {
      const clerkBody = JSON.stringify(buildSample('auth', 'user.created', undefined, tools.clock.now()));
      const clerkHeaders = signSample('auth', clerkBody, tools.config, { nowMs: tools.clock.now() });
      const clerk = JSON.parse((await api((await post('auth', clerkBody, clerkHeaders)).id)).text) as ApiEvent;
      expect(clerk.request!.verification).toBe('clerk: svix-signature v1 matched, signed 0 s before receipt');
      expect(clerk.request!.headers['svix-signature']).toBe(`[masked, ${clerkHeaders['svix-signature']!.length} chars]`);
      expect(clerk.request!.headers['svix-id']).toBe(clerkHeaders['svix-id']);
      expect(JSON.stringify(clerk)).not.toContain(clerkHeaders['svix-signature']!.split(',')[1]!);

      const githubBody = JSON.stringify(buildSample('github', 'issues.opened', undefined, tools.clock.now()));
      const githubHeaders = signSample('github', githubBody, tools.config, { nowMs: tools.clock.now(), type: 'issues.opened' });
      const github = JSON.parse((await api((await post('github', githubBody, githubHeaders)).id)).text) as ApiEvent;
      expect(github.request!.verification).toMatch(/^github: X-Hub-Signature-256 sha256 matched, no signed timestamp/);
      expect(github.request!.headers['x-hub-signature-256']).toBe(`[masked, ${githubHeaders['x-hub-signature-256']!.length} chars]`);
      expect(github.request!.headers['x-github-event']).toBe('issues');
      expect(JSON.stringify(github)).not.toContain(githubHeaders['x-hub-signature-256']!.slice('sha256='.length));
    });

    it('a duplicate keeps the first request; an event stored without a request says so', async () => {
      const body = JSON.stringify(buildSample('payments', 'customer.subscription.created', undefined, tools.clock.now()));
      const headers = { ...signSample('payments', body, tools.config, { nowMs: tools.clock.now() }) };
      const first = await post('payments', body, { ...headers, 'x-delivery-attempt': 'first' });
      const again = await post('payments', body, { ...headers, 'x-delivery-attempt': 'second' });
      expect(again).toMatchObject({ id: first.id, duplicate: true });
      const { request } = JSON.parse((await api(first.id)).text) as ApiEvent;
      expect(request!.headers['x-delivery-attempt']).toBe('first');
      const [counted] = await testDb.db.query<{ n: number }>('SELECT count(*)::int AS n FROM hookrun.event_requests WHERE event_id = $1', [first.id]);
      expect(counted!.n).toBe(1);
      const [bare] = await testDb.db.query<{ id: number }>(
        `INSERT INTO hookrun.webhook_events (source, key, type, payload) VALUES ('database', 'change-1', 'INSERT', '{}') RETURNING id`,
      );
      expect((JSON.parse((await api(Number(bare!.id))).text) as ApiEvent).request).toBeNull();
      const page = await (await tools.app.request(`/admin/events/${bare!.id}`, { headers: { cookie: await login() } })).text();
      expect(page).toContain('a captured database change');
    });

    it('filters by handler, time range and payload (equals a string, number or boolean; contains); a bad one is a 400', async () => {
      const stored: number[] = [];
      for (const [customer, amount, paid] of [
        ['cus_search_a', 4200, true],
        ['cus_search_b', 900, false],
      ] as const) {
        const event = buildSample('payments', 'invoice.paid', { data: { object: { customer, amount_paid: amount, paid } } }, tools.clock.now());
        const body = JSON.stringify(event);
        stored.push((await post('payments', body, signSample('payments', body, tools.config, { nowMs: tools.clock.now() }))).id);
      }
      const [a, b] = stored as [number, number];
      // Only `a` has a delivery to sync-crm (a handler of another release, say).
      await testDb.db.query(`DELETE FROM hookrun.new_events WHERE event_id = $1`, [a]);
      await testDb.db.query(
        `INSERT INTO hookrun.handler_deliveries (event_id, handler, status, attempts, last_error) VALUES ($1, 'sync-crm', 'failed', 1, 'boom')`,
        [a],
      );
      await testDb.db.query(`UPDATE hookrun.webhook_events SET received_at = '2020-01-01T10:00:00Z' WHERE id = $1`, [b]);
      const ids = async (query: string) => (await list(query)).body.events!.map((e) => e.id);
      expect(await ids('handler=sync-crm')).toEqual([a]);
      expect(await ids(`where=${encodeURIComponent('data.object.customer = cus_search_b')}`)).toEqual([b]);
      expect(await ids(`where=${encodeURIComponent('data.object.amount_paid = 4200')}`)).toEqual([a]);
      expect(await ids(`where=${encodeURIComponent('data.object.paid = false')}`)).toEqual([b]);
      expect(await ids(`where=${encodeURIComponent('data.object.customer ~ SEARCH_')}`)).toEqual([b, a]);
      expect(await ids(`from=2020-01-01T09:00:00Z&to=2020-01-01T11:00:00Z`)).toEqual([b]);
      expect(await ids(`from=2020-01-01T11:00:00Z&where=${encodeURIComponent('data.object.customer ~ cus_search')}`)).toEqual([a]);
      const bad = await list(`where=${encodeURIComponent('data..customer = x')}`);
      expect(bad.status).toBe(400);
      expect(bad.body.error).toMatchObject({ code: 'bad_request', message: expect.stringContaining('A payload path is') });

      const cli = await runCli(['events', 'list', '--handler', 'sync-crm', '--where', 'data.object.customer ~ search', '--from', '2021-01-01', '--json'], {
        DATABASE_URL: testDb.url!,
        ADMIN_TOKEN: SECRETS.admin,
      });
      expect(cli.code, cli.stderr).toBe(0);
      expect((JSON.parse(cli.stdout) as { events: Array<{ id: number }> }).events.map((e) => e.id)).toEqual([a]);
      const refused = await runCli(['events', 'list', '--where', 'no operator here'], { DATABASE_URL: testDb.url!, ADMIN_TOKEN: SECRETS.admin });
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain('A payload search is');
      const badTime = await runCli(['events', 'list', '--to', 'yesterday-ish'], { DATABASE_URL: testDb.url! });
      expect(badTime.code).not.toBe(0);
      expect(badTime.stderr).toContain('--to "yesterday-ish" is not a date or time: write an ISO 8601 date or time');
    });

    async function login(): Promise<string> {
      const res = await tools.app.request('/admin/login', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: SECRETS.admin }).toString(),
      });
      return res.headers.get('set-cookie')!.split(';')[0]!;
    }
  },
);
