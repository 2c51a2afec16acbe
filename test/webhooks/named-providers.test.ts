import { createHmac, randomUUID } from 'node:crypto';
import { sign as githubSign, verify as githubVerify } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import twilio from 'twilio';
import { beforeEach, describe, expect, it } from 'vitest';
import { encodeSample, buildSample, signSample } from '../../src/webhooks/samples.js';
import { countEvents, createTestApp, type TestApp } from '../helpers/app.js';
import { SECRETS } from '../helpers/config.js';
import { pgliteOnly, useTestDatabase } from '../helpers/db.js';

type Headers = Record<string, string>;

describe.each(pgliteOnly())('named receivers on $name', (kind) => {
  const tdb = useTestDatabase(kind);
  let t: TestApp;
  const post = (route: string, body: string, headers: Headers, url = `http://localhost/webhooks/${route}`) =>
    t.app.request(url, { method: 'POST', body, headers });
  const stored = async (source: string) =>
    tdb.db.query<{ key: string; type: string; payload: unknown }>('SELECT key, type, payload FROM hookrun.webhook_events WHERE source = $1 ORDER BY id', [
      source,
    ]);
  const error = async (res: Response) => ((await res.json()) as { error: { code: string; message: string } }).error;

  beforeEach(() => {
    t = createTestApp(tdb.db);
  });

  describe('GitHub', () => {
    const headers = async (body: string, extra: Headers = {}, secret: string = SECRETS.github): Promise<Headers> => ({
      'content-type': 'application/json',
      'x-hub-signature-256': await githubSign(secret, body), // @octokit/webhooks-methods, GitHub's own
      'x-github-delivery': randomUUID(),
      'x-github-event': 'issues',
      ...extra,
    });

    it('accepts a delivery signed by @octokit/webhooks-methods: key X-GitHub-Delivery, type event.action; a redelivery is a duplicate', async () => {
      const body = JSON.stringify({ action: 'opened', issue: { number: 1 } });
      const signed = await headers(body);
      const res = await post('github', body, signed);
      expect(res.status).toBe(200);
      expect(await stored('github')).toMatchObject([{ key: signed['x-github-delivery'], type: 'issues.opened' }]);
      const again = await post('github', body, signed);
      expect(await again.json()).toMatchObject({ duplicate: true });
      const ping = JSON.stringify({ zen: 'Design for failure.' });
      expect((await post('github', ping, await headers(ping, { 'x-github-event': 'ping' }))).status).toBe(200);
      expect((await stored('github')).map((e) => e.type)).toEqual(['issues.opened', 'ping']);
    });

    it('stores events whose names have digits, repository_dispatch with its caller-chosen action, and names it does not know, as given', async () => {
      const deliveries: Array<[event: string, body: object, type: string]> = [
        ['projects_v2_item', { action: 'edited', projects_v2_item: { id: 1 } }, 'projects_v2_item.edited'],
        ['projects_v2_status_update', { action: 'created', projects_v2_status_update: { id: 2 } }, 'projects_v2_status_update.created'],
        ['repository_dispatch', { action: 'deploy-to-prod now', branch: 'main', client_payload: {} }, 'repository_dispatch.deploy-to-prod now'],
        ['some-future_event2', { thing: { id: 3 } }, 'some-future_event2'],
      ];
      for (const [event, payload, type] of deliveries) {
        const body = JSON.stringify(payload);
        const res = await post('github', body, await headers(body, { 'x-github-event': event }));
        expect(res.status, await res.clone().text()).toBe(200);
        expect((await stored('github')).at(-1)!.type).toBe(type);
      }
      const body = JSON.stringify({ zen: 'x' });
      for (const event of ['', 'has.dot', 'tab\tinside']) {
        const refused = await post('github', body, await headers(body, { 'x-github-event': event }));
        expect(await error(refused)).toMatchObject({ code: 'invalid_payload', message: expect.stringContaining('X-GitHub-Event') });
      }
    });

    it('refuses a tampered body, another secret, a missing signature, and a delivery without its id', async () => {
      const body = JSON.stringify({ action: 'opened' });
      const signed = await headers(body);
      expect(await error(await post('github', body.replace('opened', 'closed'), signed))).toMatchObject({ code: 'invalid_signature' });
      expect(await error(await post('github', body, await headers(body, {}, 'another-secret')))).toMatchObject({ code: 'invalid_signature' });
      const { 'x-hub-signature-256': _, ...unsigned } = signed;
      expect(await error(await post('github', body, unsigned))).toMatchObject({
        code: 'missing_signature',
        message: expect.stringContaining('GITHUB_WEBHOOK_SECRET'),
      });
      const { 'x-github-delivery': __, ...noId } = signed;
      expect(await error(await post('github', body, noId))).toMatchObject({ code: 'invalid_payload' });
      expect(await countEvents(tdb.db, 'github')).toBe(0);
    });

    it('hookrun send signs as GitHub does (octokit verifies it)', async () => {
      const body = encodeSample('github', buildSample('github', 'pull_request.opened'));
      const signed = signSample('github', body, t.config, { type: 'pull_request.opened' });
      expect(await githubVerify(SECRETS.github, body, signed['x-hub-signature-256']!)).toBe(true);
      expect(signed['x-github-event']).toBe('pull_request');
      expect((await post('github', body, signed)).status).toBe(200);
      expect((await stored('github'))[0]!.type).toBe('pull_request.opened');
    });
  });

  describe('Shopify', () => {
    // Shopify ships no standalone signing library: its published algorithm (base64 HMAC-SHA256 of the body).
    const headers = (body: string, extra: Headers = {}, secret: string = SECRETS.shopify): Headers => ({
      'content-type': 'application/json',
      'x-shopify-hmac-sha256': createHmac('sha256', secret).update(body).digest('base64'),
      'x-shopify-event-id': randomUUID(),
      'x-shopify-topic': 'orders/create',
      ...extra,
    });

    it('accepts a signed delivery: key X-Shopify-Event-Id (a second delivery of the event is a duplicate), type the topic', async () => {
      const body = JSON.stringify({ id: 820982911946154500, total_price: '29.00' });
      const signed = headers(body);
      expect((await post('shopify', body, signed)).status).toBe(200);
      // Shopify re-sends an event under a new webhook id but the same event id.
      const redelivered = await post('shopify', body, { ...signed, 'x-shopify-webhook-id': randomUUID() });
      expect(await redelivered.json()).toMatchObject({ duplicate: true });
      expect(await stored('shopify')).toMatchObject([{ key: signed['x-shopify-event-id'], type: 'orders/create' }]);
    });

    it('refuses a tampered body, another secret, a missing signature and a missing topic', async () => {
      const body = JSON.stringify({ id: 1 });
      expect(await error(await post('shopify', '{"id":2}', headers(body)))).toMatchObject({ code: 'invalid_signature' });
      expect(await error(await post('shopify', body, headers(body, {}, 'other')))).toMatchObject({ code: 'invalid_signature' });
      const { 'x-shopify-hmac-sha256': _, ...unsigned } = headers(body);
      expect(await error(await post('shopify', body, unsigned))).toMatchObject({ code: 'missing_signature' });
      const { 'x-shopify-topic': __, ...noTopic } = headers(body);
      expect(await error(await post('shopify', body, noTopic))).toMatchObject({ code: 'invalid_payload' });
      expect(await countEvents(tdb.db, 'shopify')).toBe(0);
    });
  });

  describe('Resend', () => {
    const headers = (body: string, options: { id?: string; at?: Date; secret?: string } = {}): Headers => {
      const { id = `msg_${randomUUID()}`, at = new Date(t.clock.now()), secret = SECRETS.resend } = options;
      return {
        'content-type': 'application/json',
        'svix-id': id,
        'svix-timestamp': String(Math.floor(at.getTime() / 1000)),
        'svix-signature': new Webhook(secret).sign(id, at, body),
      };
    };

    it('accepts a Svix-signed event keyed by svix-id, typed by its type; refuses tampered, stale and unsigned ones', async () => {
      const body = JSON.stringify({ type: 'email.delivered', created_at: new Date().toISOString(), data: { email_id: 'e1' } });
      const signed = headers(body);
      expect((await post('resend', body, signed)).status).toBe(200);
      expect(await stored('resend')).toMatchObject([{ key: signed['svix-id'], type: 'email.delivered' }]);
      expect(await error(await post('resend', body.replace('delivered', 'bounced'), headers(body)))).toMatchObject({ code: 'invalid_signature' });
      expect(await error(await post('resend', body, headers(body, { at: new Date(t.clock.now() - 10 * 60_000) })))).toMatchObject({
        code: 'timestamp_out_of_tolerance',
      });
      expect(await error(await post('resend', body, { 'content-type': 'application/json' }))).toMatchObject({ code: 'missing_signature' });
      expect(await countEvents(tdb.db, 'resend')).toBe(1);
    });
  });

  describe('Twilio', () => {
    const form = {
      MessageSid: 'SM0123456789abcdef0123456789abcdef',
      MessageStatus: 'delivered',
      AccountSid: 'AC0123456789abcdef0123456789abcdef',
      To: '+15558675310',
    };
    const body = new URLSearchParams(form).toString();
    // twilio-node's own signature for the URL Twilio calls.
    const headers = (url: string, params: Record<string, string> = form, token: string = SECRETS.twilio): Headers => ({
      'content-type': 'application/x-www-form-urlencoded',
      'x-twilio-signature': twilio.getExpectedTwilioSignature(token, url, params),
    });

    it('accepts a form delivery signed by twilio-node for the request URL; stores the parameters as JSON, typed by status', async () => {
      const url = 'http://localhost/webhooks/twilio?tenant=acme';
      const res = await post('twilio', body, { ...headers(url), 'i-twilio-idempotency-token': 'tok-1' }, url);
      expect(res.status).toBe(200);
      expect(await stored('twilio')).toEqual([{ key: 'tok-1', type: 'message.delivered', payload: form }]);
      // Without an idempotency token, the same body again is the same event (a retry).
      expect((await post('twilio', body, headers(url), url)).status).toBe(200);
      expect(await (await post('twilio', body, headers(url), url)).json()).toMatchObject({ duplicate: true });
      // An IPv6 host with a port: the URL as twilio-node signs it.
      const v6 = 'http://[::1]:3002/webhooks/twilio';
      const other = new URLSearchParams({ ...form, MessageStatus: 'read' }).toString();
      expect((await post('twilio', other, headers(v6, { ...form, MessageStatus: 'read' }), v6)).status).toBe(200);
    });

    it('checks the signature against PUBLIC_URL behind a proxy, and refuses tampering, another token, JSON and no signature', async () => {
      const publicUrl = 'https://api.example.com/webhooks/twilio';
      expect(await error(await post('twilio', body, headers(publicUrl)))).toMatchObject({
        code: 'invalid_signature',
        message: expect.stringContaining('PUBLIC_URL'),
      });
      const proxied = createTestApp(tdb.db, { PUBLIC_URL: 'https://api.example.com' });
      expect((await proxied.app.request('http://10.0.0.5:3002/webhooks/twilio', { method: 'POST', body, headers: headers(publicUrl) })).status).toBe(200);

      const url = 'http://localhost/webhooks/twilio';
      expect(await error(await post('twilio', body.replace('delivered', 'failed'), headers(url)))).toMatchObject({ code: 'invalid_signature' });
      expect(await error(await post('twilio', body, headers(url, form, 'f'.repeat(32))))).toMatchObject({ code: 'invalid_signature' });
      expect(await error(await post('twilio', JSON.stringify(form), { ...headers(url), 'content-type': 'application/json' }))).toMatchObject({
        code: 'unsupported_media_type',
      });
      expect(await error(await post('twilio', body, { 'content-type': 'application/x-www-form-urlencoded' }))).toMatchObject({ code: 'missing_signature' });
      expect(await countEvents(tdb.db, 'twilio')).toBe(1);
    });

    it('hookrun send signs as Twilio does (twilio-node validates it)', async () => {
      const event = buildSample('twilio', 'message.received');
      const sent = encodeSample('twilio', event);
      const url = 'http://localhost:3002/webhooks/twilio';
      const signed = signSample('twilio', sent, t.config, { url });
      expect(twilio.validateRequest(SECRETS.twilio, signed['x-twilio-signature']!, url, Object.fromEntries(new URLSearchParams(sent)))).toBe(true);
      expect((await post('twilio', sent, signed, url)).status).toBe(200);
      expect((await stored('twilio'))[0]).toMatchObject({ type: 'message.received', payload: { Body: 'Hello from hookrun' } });
    });
  });

  it('a named receiver without its secret answers 503 not_configured, naming the env', async () => {
    const bare = createTestApp(tdb.db, { GITHUB_WEBHOOK_SECRET: undefined, TWILIO_AUTH_TOKEN: undefined });
    const github = await bare.app.request('/webhooks/github', { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    expect(github.status).toBe(503);
    expect(await error(github)).toMatchObject({ code: 'not_configured', message: expect.stringContaining('GITHUB_WEBHOOK_SECRET') });
    const twilioRes = await bare.app.request('/webhooks/twilio', {
      method: 'POST',
      body: 'a=b',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(await error(twilioRes)).toMatchObject({ code: 'not_configured', message: expect.stringContaining('TWILIO_AUTH_TOKEN') });
  });
});
