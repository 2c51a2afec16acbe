import { createHmac, randomUUID } from 'node:crypto';
import { Environment, Paddle } from '@paddle/paddle-node-sdk';
import { Webhook } from 'standardwebhooks';
import { beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { PAYMENTS_PROVIDERS, AUTH_PROVIDERS } from '../../src/webhooks/providers/index.js';
import { buildSample, encodeSample, signSample } from '../../src/webhooks/samples.js';
import { countEvents, createTestApp, type TestApp } from '../helpers/app.js';
import { pgliteOnly, useTestDatabase } from '../helpers/db.js';

type Headers = Record<string, string>;
const SECRET = {
  paddle: 'pdl_ntfset_01hsecretfortests_abcdefghijklmnopqrstuvwx',
  lemonsqueezy: 'lemon-signing-secret-for-tests',
  polar: 'polar_whs_secretfortests0123456789',
  workos: 'workos-webhook-secret-for-tests',
  supabase: `v1,whsec_${Buffer.from('supabase-auth-hook-secret-32byte').toString('base64')}`,
};
const hex = (secret: string, data: string) => createHmac('sha256', secret).update(data).digest('hex');

/** One chosen provider: its env, how its sender signs (by its own library where there is one), a body, and what hookrun stores. */
interface Case {
  name: keyof typeof SECRET;
  route: 'payments' | 'auth';
  env: Record<string, string>;
  body(id: string): string;
  sign(body: string, nowMs: number, id: string, secret?: string): Headers;
  expected(id: string): { key: string | RegExp; type: string };
  /** A signature this much older than now is refused (undefined: the scheme signs no time). */
  staleMs?: number;
}

const standard =
  (secret: string) =>
  (body: string, nowMs: number, id: string, other?: string): Headers => {
    const at = new Date(Math.floor(nowMs / 1000) * 1000);
    return {
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(nowMs / 1000)),
      'webhook-signature': new Webhook(other ? Buffer.from(other).toString('base64') : secret).sign(id, at, body),
    };
  };

const CASES: Case[] = [
  {
    name: 'paddle',
    route: 'payments',
    env: { PAYMENTS_PROVIDER: 'paddle', PADDLE_WEBHOOK_SECRET: SECRET.paddle, PAYMENTS_WEBHOOK_SECRET: '' },
    body: (id) =>
      JSON.stringify({
        event_id: `evt_${id}`,
        event_type: 'subscription.updated',
        occurred_at: new Date().toISOString(),
        data: { id: 'sub_1', status: 'active' },
      }),
    sign: (body, nowMs, _id, secret = SECRET.paddle) => {
      const ts = Math.floor(nowMs / 1000);
      // Two h1 during a secret rotation: the old secret's first, any may match.
      return { 'paddle-signature': `ts=${ts};h1=${hex('old-secret', `${ts}:${body}`)};h1=${hex(secret, `${ts}:${body}`)}` };
    },
    expected: (id) => ({ key: `evt_${id}`, type: 'subscription.updated' }),
    staleMs: 6_000,
  },
  {
    name: 'lemonsqueezy',
    route: 'payments',
    env: { PAYMENTS_PROVIDER: 'lemonsqueezy', LEMONSQUEEZY_WEBHOOK_SECRET: SECRET.lemonsqueezy, PAYMENTS_WEBHOOK_SECRET: '' },
    body: (id) => JSON.stringify({ meta: { event_name: 'subscription_created' }, data: { type: 'subscriptions', id } }),
    sign: (body, _nowMs, _id, secret = SECRET.lemonsqueezy) => ({ 'x-signature': hex(secret, body) }),
    expected: () => ({ key: /^sha256:[0-9a-f]{64}$/, type: 'subscription_created' }),
  },
  {
    name: 'polar',
    route: 'payments',
    env: { PAYMENTS_PROVIDER: 'polar', POLAR_WEBHOOK_SECRET: SECRET.polar, PAYMENTS_WEBHOOK_SECRET: '' },
    body: (id) => JSON.stringify({ type: 'subscription.active', data: { id } }),
    // Polar's SDK hands standardwebhooks the secret's bytes in base64: the same here.
    sign: (body, nowMs, id, secret) => standard(Buffer.from(SECRET.polar).toString('base64'))(body, nowMs, id, secret),
    expected: (id) => ({ key: `msg_${id}`, type: 'subscription.active' }),
    staleMs: 301_000,
  },
  {
    name: 'workos',
    route: 'auth',
    env: { AUTH_PROVIDER: 'workos', WORKOS_WEBHOOK_SECRET: SECRET.workos, AUTH_WEBHOOK_SECRET: '' },
    body: (id) => JSON.stringify({ id: `event_${id}`, event: 'user.created', data: { object: 'user', id: 'user_01' }, created_at: new Date().toISOString() }),
    sign: (body, nowMs, _id, secret = SECRET.workos) => ({ 'workos-signature': `t=${nowMs}, v1=${hex(secret, `${nowMs}.${body}`)}` }),
    expected: (id) => ({ key: `event_${id}`, type: 'user.created' }),
    staleMs: 181_000,
  },
  {
    name: 'supabase',
    route: 'auth',
    env: { AUTH_PROVIDER: 'supabase', SUPABASE_AUTH_HOOK_SECRET: SECRET.supabase, AUTH_WEBHOOK_SECRET: '' },
    body: () => JSON.stringify({ user: { id: randomUUID(), email: 'ada@example.com' }, email_data: { token: '123456', email_action_type: 'recovery' } }),
    sign: (body, nowMs, id, secret) => standard(SECRET.supabase.slice('v1,'.length))(body, nowMs, id, secret),
    expected: (id) => ({ key: `msg_${id}`, type: 'send_email.recovery' }),
    staleMs: 301_000,
  },
];

describe.each(pgliteOnly())('PAYMENTS_PROVIDER and AUTH_PROVIDER on $name', (kind) => {
  const tdb = useTestDatabase(kind);

  describe.each(CASES)('$route served by $name', (c) => {
    let t: TestApp;
    const post = (body: string, headers: Headers) =>
      t.app.request(`http://localhost/webhooks/${c.route}`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
    const error = async (res: Response) => ((await res.json()) as { error: { code: string } }).error.code;
    let seq = 0;

    beforeEach(() => {
      t = createTestApp(tdb.db, c.env);
    });

    it('accepts a delivery signed as the provider signs it, with its key and type; the same delivery again is a duplicate', async () => {
      const id = `${c.name}${++seq}`;
      const body = c.body(id);
      const headers = c.sign(body, t.clock.now(), `msg_${id}`);
      const res = await post(body, headers);
      expect(res.status).toBe(200);
      const [row] = await tdb.db.query<{ key: string; type: string; source: string }>('SELECT key, type, source FROM hookrun.webhook_events');
      const expected = c.expected(id);
      expect(row).toMatchObject({ source: c.route, type: expected.type });
      expect(row!.key).toMatch(typeof expected.key === 'string' ? new RegExp(`^${expected.key}$`) : expected.key);
      expect(await (await post(body, headers)).json()).toMatchObject({ duplicate: true });
    });

    it('refuses a tampered body, another secret, a stale signature and no signature', async () => {
      const id = `${c.name}${++seq}`;
      const body = c.body(id);
      const now = t.clock.now();
      expect(await error(await post(body.replace('{', '{ '), c.sign(body, now, `msg_${id}`)))).toBe('invalid_signature');
      expect(await error(await post(body, c.sign(body, now, `msg_${id}`, 'another-secret-of-32-characters!')))).toBe('invalid_signature');
      if (c.staleMs !== undefined) expect(await error(await post(body, c.sign(body, now - c.staleMs, `msg_${id}`)))).toBe('timestamp_out_of_tolerance');
      expect(await error(await post(body, {}))).toBe('missing_signature');
      expect(await countEvents(tdb.db)).toBe(0);
    });

    it('hookrun send builds and signs every sample type as this provider, and the receiver takes each', async () => {
      const provider = c.route === 'payments' ? PAYMENTS_PROVIDERS[c.name as 'paddle'] : AUTH_PROVIDERS[c.name as 'workos'];
      for (const type of provider.sampleTypes ?? []) {
        const body = encodeSample(c.route, buildSample(c.route, type, undefined, t.clock.now(), provider), provider);
        const res = await post(body, signSample(c.route, body, t.config, { nowMs: t.clock.now(), type }));
        expect(res.status, `${c.name} ${type}`).toBe(200);
      }
      expect((await tdb.db.query<{ type: string }>('SELECT type FROM hookrun.webhook_events ORDER BY id')).map((r) => r.type)).toEqual(provider.sampleTypes);
    });
  });

  it("Paddle's own SDK accepts what hookrun send signs", async () => {
    const config = loadConfig({ PAYMENTS_PROVIDER: 'paddle', PADDLE_WEBHOOK_SECRET: SECRET.paddle, PLATFORM_CONFIG: '/none.json' });
    const body = encodeSample('payments', buildSample('payments', 'subscription.created', undefined, Date.now(), PAYMENTS_PROVIDERS.paddle));
    const headers = signSample('payments', body, config);
    // The SDK client makes no request here: its webhooks helper verifies locally.
    const paddle = new Paddle('pdl_sdbx_apikey_01hfortestsonly_0123456789abcdef', { environment: Environment.sandbox });
    expect(await paddle.webhooks.isSignatureValid(body, SECRET.paddle, headers['paddle-signature']!)).toBe(true);
    expect(await paddle.webhooks.isSignatureValid(body.replace('subscription', 'Subscription'), SECRET.paddle, headers['paddle-signature']!)).toBe(false);
  });
});

describe('choosing a provider', () => {
  it('refuses an unknown PAYMENTS_PROVIDER or AUTH_PROVIDER, naming the choices', () => {
    expect(() => loadConfig({ PAYMENTS_PROVIDER: 'paypal', PLATFORM_CONFIG: '/none.json' })).toThrow(
      /PAYMENTS_PROVIDER="paypal" is not valid: use one of stripe, paddle, lemonsqueezy, polar/,
    );
    expect(() => loadConfig({ AUTH_PROVIDER: 'auth0', PLATFORM_CONFIG: '/none.json' })).toThrow(
      /AUTH_PROVIDER="auth0" is not valid: use one of clerk, workos, supabase/,
    );
  });

  it('reads the route generic secret first, then the provider its own', () => {
    const config = loadConfig({ PAYMENTS_PROVIDER: 'paddle', PADDLE_WEBHOOK_SECRET: 'p', STRIPE_WEBHOOK_SECRET: 's', PLATFORM_CONFIG: '/none.json' });
    expect(config.secrets.payments).toEqual({ envName: 'PADDLE_WEBHOOK_SECRET', values: ['p'] });
    expect(config.secretEnvNames.payments).toEqual(['PAYMENTS_WEBHOOK_SECRET', 'PADDLE_WEBHOOK_SECRET']);
    expect(
      loadConfig({ PAYMENTS_PROVIDER: 'paddle', PAYMENTS_WEBHOOK_SECRET: 'g', PADDLE_WEBHOOK_SECRET: 'p', PLATFORM_CONFIG: '/none.json' }).secrets.payments
        ?.envName,
    ).toBe('PAYMENTS_WEBHOOK_SECRET');
  });
});
