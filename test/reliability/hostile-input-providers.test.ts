import { createHmac } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import type { Hono } from 'hono';
import { Webhook } from 'standardwebhooks';
import twilio from 'twilio';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { EventWriter } from '../../src/db/event-writer.js';
import { createApp } from '../../src/http/app.js';
import { Metrics } from '../../src/metrics.js';
import { createVerifiers } from '../../src/webhooks/verifiers.js';
import { createCaptureLogger } from '../helpers/capture-logger.js';
import { SECRETS, testConfig } from '../helpers/config.js';
import { createPgliteDatabase, emptyTables, type TestDatabase } from '../helpers/db.js';
import { reportFigures } from '../helpers/figures.js';
import { assertNoSecretLeaks, recordResponse } from '../helpers/secret-scan.js';

// The hostile-input property test (guarantee 4) for the senders beyond the seed's three: the same attacks,
// each provider signed by its own library where it has one (twilio-node, standardwebhooks; GitHub's and
// Shopify's published HMAC, which @octokit/webhooks-methods computes identically but only asynchronously).

const NOW_MS = Date.UTC(2026, 5, 1, 12, 0, 0);
const NOW_S = NOW_MS / 1000;
const MAX_BODY = 4096;
const RUNS = { unauthenticated: 600, tampered: 400, signedHostileBody: 300 } as const;
const URL_BASE = 'http://localhost';
const encoder = new TextEncoder();

type Headers = Record<string, string>;
interface Scheme {
  /** The route it is served on, and the env that picks it (PAYMENTS_PROVIDER, AUTH_PROVIDER). */
  route?: 'payments' | 'auth';
  env?: Record<string, string>;
  contentType: string;
  signatureHeader: string;
  validBody(id: string): string;
  sign(body: string, id: string, secret?: string, atSeconds?: number): Headers;
  /** Random headers in the scheme's shape (never the right signature). */
  randomHeaders: fc.Arbitrary<Headers>;
  /** Whether the scheme signs a timestamp (then a shifted one must be refused). */
  timestamped: boolean;
}

const headerValue = fc
  .array(fc.oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0x80, max: 0xff })), { maxLength: 80 })
  .map((codes) => String.fromCharCode(...codes).trim());
const base64 = (bytes: number) => fc.uint8Array({ minLength: bytes, maxLength: bytes }).map((b) => Buffer.from(b).toString('base64'));
const hex = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString('hex'));
const hmac = (algorithm: string, secret: string, data: string, encoding: 'hex' | 'base64') => createHmac(algorithm, secret).update(data).digest(encoding);
const twilioParams = (body: string) => Object.fromEntries(new URLSearchParams(body));

// A sender described in platform.json `webhooks`: HMAC-SHA256 hex of `<timestamp>.<body>`, prefixed.
const customPlatform = join(mkdtempSync(join(tmpdir(), 'hookrun-hostile-')), 'platform.json');
writeFileSync(
  customPlatform,
  JSON.stringify({
    webhooks: [
      {
        route: 'acme',
        secretEnv: 'ACME_WEBHOOK_SECRET',
        header: 'X-Acme-Signature',
        prefix: 'v1=',
        timestampHeader: 'X-Acme-Timestamp',
        keyPath: 'id',
        typePath: 'type',
      },
    ],
  }),
);
const acmeSecret = 'acme-hostile-secret';
const paddleSecret = 'pdl_ntfset_hostile_secret';
const workosSecret = 'workos-hostile-secret';
const lemonSecret = 'lemon-hostile-secret';
const polarSecret = 'polar_whs_hostile_secret';
const supabaseHookSecret = `whsec_${Buffer.from('supabase-hook-hostile-secret-32b').toString('base64')}`;
const standardSign =
  (key: string) =>
  (body: string, id: string, secret?: string, at = NOW_S): Headers => ({
    'webhook-id': id,
    'webhook-timestamp': String(at),
    'webhook-signature': new Webhook(secret ? Buffer.from(secret).toString('base64') : key).sign(id, new Date(at * 1000), body),
  });
const standardHeaders = fc.record(
  {
    'webhook-id': headerValue,
    'webhook-timestamp': fc.oneof(headerValue, fc.integer({ min: NOW_S - 5000, max: NOW_S + 5000 }).map(String)),
    'webhook-signature': fc.oneof(
      headerValue,
      base64(32).map((b) => `v1,${b}`),
    ),
  },
  { requiredKeys: [] },
);

const SCHEMES: Record<'github' | 'shopify' | 'resend' | 'twilio' | 'paddle' | 'lemonsqueezy' | 'polar' | 'workos' | 'supabase' | 'acme', Scheme> = {
  github: {
    contentType: 'application/json',
    signatureHeader: 'x-hub-signature-256',
    validBody: (id) => JSON.stringify({ action: 'opened', issue: { id } }),
    sign: (body, id, secret = SECRETS.github) => ({
      'x-hub-signature-256': `sha256=${hmac('sha256', secret, body, 'hex')}`,
      'x-github-delivery': id,
      'x-github-event': 'issues',
    }),
    randomHeaders: fc.record(
      {
        'x-hub-signature-256': fc.oneof(
          headerValue,
          hex.map((h) => `sha256=${h}`),
        ),
        'x-github-delivery': headerValue,
        'x-github-event': fc.oneof(headerValue, fc.constant('push')),
      },
      { requiredKeys: [] },
    ),
    timestamped: false,
  },
  shopify: {
    contentType: 'application/json',
    signatureHeader: 'x-shopify-hmac-sha256',
    validBody: (id) => JSON.stringify({ id, total_price: '1.00' }),
    sign: (body, id, secret = SECRETS.shopify) => ({
      'x-shopify-hmac-sha256': hmac('sha256', secret, body, 'base64'),
      'x-shopify-event-id': id,
      'x-shopify-topic': 'orders/create',
    }),
    randomHeaders: fc.record(
      {
        'x-shopify-hmac-sha256': fc.oneof(headerValue, base64(32)),
        'x-shopify-event-id': headerValue,
        'x-shopify-topic': fc.oneof(headerValue, fc.constant('orders/create')),
      },
      { requiredKeys: [] },
    ),
    timestamped: false,
  },
  resend: {
    contentType: 'application/json',
    signatureHeader: 'svix-signature',
    validBody: (id) => JSON.stringify({ type: 'email.sent', data: { email_id: id } }),
    sign: (body, id, secret = SECRETS.resend, at = NOW_S) => ({
      'svix-id': id,
      'svix-timestamp': String(at),
      'svix-signature': new Webhook(secret).sign(id, new Date(at * 1000), body),
    }),
    randomHeaders: fc.record(
      {
        'svix-id': headerValue,
        'svix-timestamp': fc.oneof(headerValue, fc.integer({ min: NOW_S - 5000, max: NOW_S + 5000 }).map(String)),
        'svix-signature': fc.oneof(
          headerValue,
          base64(32).map((b) => `v1,${b}`),
        ),
      },
      { requiredKeys: [] },
    ),
    timestamped: true,
  },
  twilio: {
    contentType: 'application/x-www-form-urlencoded',
    signatureHeader: 'x-twilio-signature',
    // No '+' or '%' escapes: Twilio signs the decoded parameters, so a flipped byte that decodes the same (%2B → %2b) would be no tampering.
    validBody: (id) => new URLSearchParams({ MessageSid: `SM${id}`, MessageStatus: 'delivered', To: '15558675310' }).toString(),
    sign: (body, id, secret = SECRETS.twilio) => ({
      'x-twilio-signature': twilio.getExpectedTwilioSignature(secret, `${URL_BASE}/webhooks/twilio`, twilioParams(body)),
      'i-twilio-idempotency-token': id,
    }),
    randomHeaders: fc.record({ 'x-twilio-signature': fc.oneof(headerValue, base64(20)), 'i-twilio-idempotency-token': headerValue }, { requiredKeys: [] }),
    timestamped: false,
  },
  paddle: {
    route: 'payments',
    env: { PAYMENTS_PROVIDER: 'paddle', PADDLE_WEBHOOK_SECRET: paddleSecret, PAYMENTS_WEBHOOK_SECRET: '' },
    contentType: 'application/json',
    signatureHeader: 'paddle-signature',
    validBody: (id) => JSON.stringify({ event_id: `evt_${id}`, event_type: 'subscription.updated', data: { id } }),
    // Paddle allows 5 s: "stale" here is anything past that.
    sign: (body, _id, secret = paddleSecret, at = NOW_S) => ({ 'paddle-signature': `ts=${at};h1=${hmac('sha256', secret, `${at}:${body}`, 'hex')}` }),
    randomHeaders: fc.record(
      {
        'paddle-signature': fc.oneof(
          headerValue,
          fc.tuple(fc.integer({ min: NOW_S - 100, max: NOW_S + 100 }), hex).map(([t, h]) => `ts=${t};h1=${h}`),
        ),
      },
      { requiredKeys: [] },
    ),
    timestamped: true,
  },
  lemonsqueezy: {
    route: 'payments',
    env: { PAYMENTS_PROVIDER: 'lemonsqueezy', LEMONSQUEEZY_WEBHOOK_SECRET: lemonSecret, PAYMENTS_WEBHOOK_SECRET: '' },
    contentType: 'application/json',
    signatureHeader: 'x-signature',
    validBody: (id) => JSON.stringify({ meta: { event_name: 'subscription_updated' }, data: { id } }),
    sign: (body, _id, secret = lemonSecret) => ({ 'x-signature': hmac('sha256', secret, body, 'hex') }),
    randomHeaders: fc.record({ 'x-signature': fc.oneof(headerValue, hex) }, { requiredKeys: [] }),
    timestamped: false,
  },
  polar: {
    route: 'payments',
    env: { PAYMENTS_PROVIDER: 'polar', POLAR_WEBHOOK_SECRET: polarSecret, PAYMENTS_WEBHOOK_SECRET: '' },
    contentType: 'application/json',
    signatureHeader: 'webhook-signature',
    validBody: (id) => JSON.stringify({ type: 'order.paid', data: { id } }),
    sign: standardSign(Buffer.from(polarSecret).toString('base64')),
    randomHeaders: standardHeaders,
    timestamped: true,
  },
  workos: {
    route: 'auth',
    env: { AUTH_PROVIDER: 'workos', WORKOS_WEBHOOK_SECRET: workosSecret, AUTH_WEBHOOK_SECRET: '' },
    contentType: 'application/json',
    signatureHeader: 'workos-signature',
    validBody: (id) => JSON.stringify({ id: `event_${id}`, event: 'user.updated', data: { id } }),
    sign: (body, _id, secret = workosSecret, at = NOW_S) => ({
      'workos-signature': `t=${at * 1000}, v1=${hmac('sha256', secret, `${at * 1000}.${body}`, 'hex')}`,
    }),
    randomHeaders: fc.record(
      {
        'workos-signature': fc.oneof(
          headerValue,
          fc.tuple(fc.integer({ min: NOW_MS - 1e6, max: NOW_MS + 1e6 }), hex).map(([t, h]) => `t=${t}, v1=${h}`),
        ),
      },
      { requiredKeys: [] },
    ),
    timestamped: true,
  },
  supabase: {
    route: 'auth',
    env: { AUTH_PROVIDER: 'supabase', SUPABASE_AUTH_HOOK_SECRET: `v1,${supabaseHookSecret}`, AUTH_WEBHOOK_SECRET: '' },
    contentType: 'application/json',
    signatureHeader: 'webhook-signature',
    validBody: (id) => JSON.stringify({ user: { id }, sms: { otp: '123456' } }),
    sign: standardSign(supabaseHookSecret),
    randomHeaders: standardHeaders,
    timestamped: true,
  },
  acme: {
    env: { PLATFORM_CONFIG: customPlatform, ACME_WEBHOOK_SECRET: acmeSecret },
    contentType: 'application/json',
    signatureHeader: 'x-acme-signature',
    validBody: (id) => JSON.stringify({ id: `a_${id}`, type: 'thing.happened' }),
    sign: (body, _id, secret = acmeSecret, at = NOW_S) => ({
      'x-acme-timestamp': String(at),
      'x-acme-signature': `v1=${hmac('sha256', secret, `${at}.${body}`, 'hex')}`,
    }),
    randomHeaders: fc.record(
      {
        'x-acme-signature': fc.oneof(
          headerValue,
          hex.map((h) => `v1=${h}`),
        ),
        'x-acme-timestamp': fc.oneof(headerValue, fc.integer({ min: NOW_S - 5000, max: NOW_S + 5000 }).map(String)),
      },
      { requiredKeys: [] },
    ),
    timestamped: true,
  },
};
const NAMES = Object.keys(SCHEMES) as Array<keyof typeof SCHEMES>;

const contentType = fc.oneof(
  fc.constantFrom('application/json', 'application/x-www-form-urlencoded', 'text/plain', 'multipart/form-data; boundary=x', ''),
  headerValue,
);
const hostileBody = fc.oneof(
  fc.uint8Array({ maxLength: 1024 }),
  fc.json({ maxDepth: 4 }).map((t) => encoder.encode(t)),
  fc.string({ unit: 'binary', maxLength: 300 }).map((t) => encoder.encode(t)),
  fc.integer({ min: 1, max: 200 }).map((n) => encoder.encode('['.repeat(n) + ']'.repeat(n))),
  fc.constantFrom(MAX_BODY + 1, MAX_BODY * 2).map((n) => new Uint8Array(n).fill(0x61)),
);

describe('hostile input for the senders beyond Stripe, Clerk and Supabase webhooks, and a platform.json scheme (fast-check, in-process)', () => {
  let database: TestDatabase;
  const apps = new Map<string, Hono>();
  const capture = createCaptureLogger('hostile-input (providers) log');
  const tried: Record<string, number> = {};
  const statuses: Record<string, number> = {};

  beforeAll(async () => {
    database = await createPgliteDatabase();
    for (const name of NAMES) {
      const config = testConfig({ LOG_LEVEL: 'debug', MAX_BODY_BYTES: String(MAX_BODY), ...SCHEMES[name].env });
      apps.set(
        name,
        createApp({
          config,
          db: database.db,
          writer: new EventWriter(database.db),
          verifiers: createVerifiers(config),
          clock: new ManualClock(NOW_MS),
          log: capture.log,
          metrics: new Metrics(),
        }),
      );
    }
  });
  beforeEach(async () => emptyTables(database.db));
  afterAll(async () => {
    await database?.close();
    const scan = assertNoSecretLeaks();
    reportFigures('4 hostile input (providers)', {
      casesTried: Object.values(tried).reduce((a, b) => a + b, 0),
      bySet: tried,
      statuses,
      logLines: capture.lines(),
      secretScan: scan,
    });
  });

  async function post(name: string, headers: Headers, body: Uint8Array | string): Promise<{ status: number; body: string }> {
    const res = await apps.get(name)!.request(`${URL_BASE}/webhooks/${SCHEMES[name as keyof typeof SCHEMES].route ?? name}`, {
      method: 'POST',
      headers,
      body: (typeof body === 'string' ? encoder.encode(body) : body) as Uint8Array<ArrayBuffer>,
    });
    const text = await res.text();
    statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    recordResponse(`hostile ${name}`, res.status, res.headers, text);
    return { status: res.status, body: text };
  }
  const storedCount = async () => (await database.db.query<{ n: number }>('SELECT count(*)::int AS n FROM hookrun.webhook_events'))[0]!.n;
  const expectRefused = (result: { status: number; body: string }) => {
    expect([400, 413, 415]).toContain(result.status);
    expect(JSON.parse(result.body)).toMatchObject({ error: { code: expect.any(String), message: expect.any(String) } });
  };

  it.each(NAMES)('%s: random headers, bodies and content types are refused with a 4xx and never stored', { timeout: 120_000 }, async (name) => {
    const scheme = SCHEMES[name];
    await fc.assert(
      fc.asyncProperty(scheme.randomHeaders, contentType, hostileBody, async (headers, type, body) => {
        expectRefused(await post(name, { ...headers, 'content-type': type }, body));
      }),
      { numRuns: RUNS.unauthenticated, seed: Number(process.env.FC_SEED) || undefined },
    );
    tried[`${name} unauthenticated`] = RUNS.unauthenticated;
    expect(await storedCount()).toBe(0);
  });

  it.each(NAMES)('%s: a valid delivery with any one tampering is refused and never stored', { timeout: 120_000 }, async (name) => {
    const scheme = SCHEMES[name];
    let counter = 0;
    const tampers = fc.oneof(
      fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })).map(([at, xor]) => (body: string, id: string) => {
        const bytes = encoder.encode(body);
        bytes[at % bytes.length]! ^= xor;
        return { headers: scheme.sign(body, id), body: bytes as Uint8Array | string };
      }),
      fc.string({ minLength: 1, maxLength: 10 }).map((extra) => (body: string, id: string) => ({
        headers: scheme.sign(body, id),
        body: body + (scheme.contentType.includes('form') ? `&x${extra}=1` : extra),
      })),
      fc.nat().map((cut) => (body: string, id: string) => ({ headers: scheme.sign(body, id), body: body.slice(0, cut % body.length) })),
      fc.string({ minLength: 1, maxLength: 20 }).map((wrong) => (body: string, id: string) => ({
        headers: scheme.sign(body, id, name === 'resend' ? `whsec_${Buffer.from(`x${wrong}`.padEnd(24, 'y')).toString('base64')}` : `${wrong}-not-the-secret`),
        body,
      })),
      fc.constant((body: string, id: string) => {
        const headers = scheme.sign(body, id);
        delete headers[scheme.signatureHeader];
        return { headers, body };
      }),
      fc
        .constantFrom('text/plain', scheme.contentType.includes('form') ? 'application/json' : 'application/x-www-form-urlencoded')
        .map((type) => (body: string, id: string) => ({ headers: { ...scheme.sign(body, id), 'content-type': type }, body })),
      ...(scheme.timestamped
        ? [
            fc
              .integer({ min: 400, max: 1e6 })
              .map((shift) => (body: string, id: string) => ({ headers: scheme.sign(body, id, undefined, NOW_S - shift), body })),
          ]
        : []),
    );
    await fc.assert(
      fc.asyncProperty(tampers, async (tamper) => {
        const id = `t${counter++}`;
        const { headers, body } = tamper(scheme.validBody(id), id);
        expectRefused(await post(name, Object.assign({ 'content-type': scheme.contentType }, headers), body));
      }),
      { numRuns: RUNS.tampered, seed: Number(process.env.FC_SEED) || undefined },
    );
    tried[`${name} tampered`] = RUNS.tampered;
    expect(await storedCount()).toBe(0);
    // Control: the untampered delivery is accepted, so the refusals above are not an artefact of the harness.
    const body = scheme.validBody('control');
    expect((await post(name, { 'content-type': scheme.contentType, ...scheme.sign(body, 'control') }, body)).status).toBe(200);
    expect(await storedCount()).toBe(1);
  });

  it.each(NAMES)(
    '%s: hostile bodies behind a VALID signature answer 200 or 4xx, never 5xx; only accepted ones are stored',
    { timeout: 120_000 },
    async (name) => {
      const scheme = SCHEMES[name];
      let counter = 0;
      let accepted = 0;
      const bodies = fc.oneof(
        fc.json({ maxDepth: 5 }),
        fc.string({ unit: 'binary', maxLength: 300 }),
        fc.integer({ min: 60, max: 2000 }).map((n) => '['.repeat(n) + ']'.repeat(n)),
      );
      await fc.assert(
        fc.asyncProperty(bodies, async (body) => {
          const id = `h${counter++}`;
          const result = await post(name, { 'content-type': scheme.contentType, ...scheme.sign(body, id) }, body);
          expect([200, 400, 413]).toContain(result.status);
          if (result.status === 200 && !(JSON.parse(result.body) as { duplicate: boolean }).duplicate) accepted++;
        }),
        { numRuns: RUNS.signedHostileBody, seed: Number(process.env.FC_SEED) || undefined },
      );
      tried[`${name} signed hostile body`] = RUNS.signedHostileBody;
      expect(await storedCount()).toBe(accepted);
    },
  );
});
