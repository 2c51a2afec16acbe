import fc from 'fast-check';
import type { Hono } from 'hono';
import Stripe from 'stripe';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
/** The seed's three receivers; the other senders have their own file (hostile-input-providers.test.ts). */
type Source = 'payments' | 'auth' | 'database';
import { EventWriter } from '../../src/db/event-writer.js';
import { createApp } from '../../src/http/app.js';
import { Metrics } from '../../src/metrics.js';
import { createVerifiers } from '../../src/webhooks/verifiers.js';
import { createCaptureLogger } from '../helpers/capture-logger.js';
import { SECRETS, testConfig } from '../helpers/config.js';
import { createPgliteDatabase, emptyTables, type TestDatabase } from '../helpers/db.js';
import { reportFigures } from '../helpers/figures.js';
import { assertNoSecretLeaks, recordResponse } from '../helpers/secret-scan.js';

const NOW_MS = Date.UTC(2026, 5, 1, 12, 0, 0);
const NOW_S = NOW_MS / 1000;
const TOLERANCE_S = 300;
/** Small body limit in the fuzzed app, so "too large" is a cheap case fast-check can reach. */
const FUZZ_MAX_BODY_BYTES = 4096;
const RUNS = { unauthenticated: 2000, tampered: 1000, signedHostileBody: 800 } as const;
const SOURCES: Source[] = ['payments', 'auth', 'database'];
const encoder = new TextEncoder();

type Headers = Record<string, string>;
interface Case {
  headers: Headers;
  body: Uint8Array;
}

// ---- arbitraries -----------------------------------------------------------

/** Header values a client can put on the wire (Fetch ByteString without CR, LF, NUL). */
const headerValue = fc
  .array(fc.oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0x80, max: 0xff }), fc.constant(0x09)), { maxLength: 80 })
  .map((codes) => String.fromCharCode(...codes).trim());
const headerName = fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/);
const hex = (length: number) =>
  fc.array(fc.integer({ min: 0, max: 15 }), { minLength: length, maxLength: length }).map((d) => d.map((x) => x.toString(16)).join(''));
const base64 = fc.uint8Array({ minLength: 0, maxLength: 48 }).map((b) => Buffer.from(b).toString('base64'));
const timestamp = fc.oneof(
  fc.constant(String(NOW_S)),
  fc.integer({ min: NOW_S - 10 * TOLERANCE_S, max: NOW_S + 10 * TOLERANCE_S }).map(String),
  fc.integer({ min: -1e12, max: 1e13 }).map(String),
  headerValue,
);
const contentType = fc.oneof(
  { arbitrary: fc.constant('application/json'), weight: 4 },
  fc.constantFrom(
    'application/json',
    'application/json; charset=utf-8',
    'APPLICATION/JSON',
    'application/vnd.api+json',
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/jsonp',
    '',
  ),
  headerValue,
);
const realisticObject = fc.record({
  id: fc.oneof(fc.string({ maxLength: 20 }), fc.integer(), fc.constant(null)),
  type: fc.oneof(fc.constantFrom('checkout.session.completed', 'user.created', 'INSERT', 'UPDATE', 'DELETE'), fc.string({ maxLength: 10 }), fc.integer()),
  table: fc.oneof(fc.constant('profiles'), fc.string({ maxLength: 5 }), fc.constant(undefined)),
  schema: fc.oneof(fc.constant('public'), fc.string({ maxLength: 5 }), fc.constant(undefined)),
  data: fc.jsonValue({ maxDepth: 3 }),
});
const hostileBody = fc.oneof(
  fc.uint8Array({ maxLength: 1024 }),
  fc.json({ maxDepth: 4 }).map((t) => encoder.encode(t)),
  fc.string({ unit: 'binary', maxLength: 300 }).map((t) => encoder.encode(t)),
  realisticObject.map((o) => encoder.encode(JSON.stringify(o))),
  fc.integer({ min: 1, max: 200 }).map((n) => encoder.encode('['.repeat(n) + ']'.repeat(n))),
  fc
    .constantFrom(
      '\uFEFF{"id":"evt_1","type":"x"}',
      '{"id":"evt_1","type":"x"',
      'null',
      '[]',
      '"x"',
      '1e999',
      '{"__proto__":{"polluted":1},"id":"e","type":"t"}',
    )
    .map((t) => encoder.encode(t)),
  fc.constantFrom(FUZZ_MAX_BODY_BYTES + 1, FUZZ_MAX_BODY_BYTES * 2).map((n) => new Uint8Array(n).fill(0x7b)),
  fc.string({ maxLength: 100 }).map((t) => new Uint8Array(Buffer.from(`{"id":"evt_1","type":"${t}"}`, 'utf16le'))),
);
const extraHeaders = fc.dictionary(headerName, headerValue, { maxKeys: 4 });

/** Random signature headers in the shape each scheme expects (never the right secret). */
const randomSignatureHeaders: Record<Source, fc.Arbitrary<Headers>> = {
  payments: fc.oneof(
    fc.constant({}),
    headerValue.map((v) => ({ 'stripe-signature': v })),
    fc.tuple(timestamp, hex(64), fc.option(hex(64))).map(([t, a, b]) => ({ 'stripe-signature': `t=${t},v1=${a}${b ? `,v0=${b}` : ''}` })),
    fc.tuple(fc.string({ minLength: 1, maxLength: 30 }), fc.string({ maxLength: 200 })).map(([secret, payload]) => ({
      'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret: `whsec_${secret}`, timestamp: NOW_S }),
    })),
  ),
  auth: fc
    .tuple(
      fc.constantFrom('svix', 'webhook'),
      fc.option(headerValue),
      fc.option(timestamp),
      fc.option(
        fc.oneof(
          headerValue,
          base64.map((b) => `v1,${b}`),
          fc.array(base64, { maxLength: 4 }).map((l) => l.map((b) => `v1,${b}`).join(' ')),
        ),
      ),
    )
    .map(([prefix, id, ts, sig]) => {
      const h: Headers = {};
      if (id !== null) h[`${prefix}-id`] = id;
      if (ts !== null) h[`${prefix}-timestamp`] = ts;
      if (sig !== null) h[`${prefix}-signature`] = sig;
      return h;
    }),
  database: fc.oneof(
    fc.constant({}),
    headerValue.map((v) => ({ authorization: v })),
    headerValue.map((v) => ({ authorization: `Bearer ${v}` })),
    fc
      .constantFrom(
        'Bearer',
        'Bearer ',
        `Basic ${SECRETS.database}`,
        `Bearer ${SECRETS.database.slice(0, -1)}`,
        `Bearer ${SECRETS.database}x`,
        `Bearer x${SECRETS.database}`,
        `Bearer ${SECRETS.database.toUpperCase()}`,
      )
      .map((v) => ({ authorization: v })),
    fc.tuple(headerValue, base64).map(([id, sig]) => ({ 'webhook-id': id, 'webhook-timestamp': String(NOW_S), 'webhook-signature': `v1,${sig}` })),
  ),
};

// ---- valid deliveries and tampering ---------------------------------------

function signValid(source: Source, body: string, id: string, atSeconds = NOW_S): Headers {
  if (source === 'payments')
    return {
      'content-type': 'application/json',
      'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload: body, secret: SECRETS.payments, timestamp: atSeconds }),
    };
  if (source === 'auth')
    return {
      'content-type': 'application/json',
      'svix-id': id,
      'svix-timestamp': String(atSeconds),
      'svix-signature': new Webhook(SECRETS.auth).sign(id, new Date(atSeconds * 1000), body),
    };
  return { 'content-type': 'application/json', authorization: `Bearer ${SECRETS.database}` };
}

function validBody(source: Source, id: string): string {
  if (source === 'payments')
    return JSON.stringify({ id: `evt_${id}`, object: 'event', type: 'invoice.paid', created: NOW_S, data: { object: { id: `in_${id}` } } });
  if (source === 'auth') return JSON.stringify({ object: 'event', type: 'user.updated', data: { id: `user_${id}`, updated_at: NOW_MS } });
  return JSON.stringify({ type: 'UPDATE', table: 'profiles', schema: 'public', record: { id }, old_record: { id } });
}

type Tamper = (source: Source, body: string, id: string) => Case;
const asCase = (headers: Headers, body: string | Uint8Array): Case => ({ headers, body: typeof body === 'string' ? encoder.encode(body) : body });

/** Mutations that must turn a valid delivery into a refused one (the signature covers body, id and timestamp). */
const signedTampers: fc.Arbitrary<Tamper> = fc.oneof(
  fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })).map(([at, xor]): Tamper => (s, body, id) => {
    const bytes = encoder.encode(body);
    bytes[at % bytes.length]! ^= xor;
    return asCase(signValid(s, body, id), bytes);
  }),
  fc.string({ minLength: 1, maxLength: 10 }).map(
    (extra): Tamper =>
      (s, body, id) =>
        asCase(signValid(s, body, id), body + extra),
  ),
  fc.nat().map(
    (cut): Tamper =>
      (s, body, id) =>
        asCase(signValid(s, body, id), body.slice(0, cut % body.length)),
  ),
  fc.oneof(fc.integer({ min: TOLERANCE_S + 1, max: 1e9 }), fc.integer({ min: -1e9, max: -(TOLERANCE_S + 1) })).map(
    (shift): Tamper =>
      (s, body, id) =>
        asCase(signValid(s, body, id, NOW_S + shift), body),
  ),
  // Signed over other bytes: `other` in place of a space (a replacer function, so `$'` in `other` is taken as it is).
  fc.string({ minLength: 1, maxLength: 40 }).map(
    (other): Tamper =>
      (s, body, id) =>
        asCase(
          signValid(
            s,
            `${body} `.replace(' ', () => other),
            id,
          ),
          body,
        ),
  ),
  fc.tuple(fc.nat(), fc.integer({ min: 1, max: 25 })).map(([at, delta]): Tamper => (s, body, id) => {
    const headers = signValid(s, body, id);
    const name = s === 'payments' ? 'stripe-signature' : 'svix-signature';
    const value = headers[name]!;
    const start = s === 'payments' ? value.indexOf('v1=') + 3 : 3;
    const i = start + (at % (value.length - start));
    const alphabet = s === 'payments' ? '0123456789abcdef' : 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    const replaced = alphabet[(alphabet.indexOf(value[i]!) + delta) % alphabet.length]!;
    headers[name] = value.slice(0, i) + (replaced === value[i] ? alphabet[(alphabet.indexOf(replaced) + 1) % alphabet.length] : replaced) + value.slice(i + 1);
    return asCase(headers, body);
  }),
  fc.constantFrom('stripe-signature', 'svix-id', 'svix-timestamp', 'svix-signature').map((drop): Tamper => (s, body, id) => {
    const headers = signValid(s, body, id);
    delete headers[s === 'payments' ? 'stripe-signature' : drop === 'stripe-signature' ? 'svix-signature' : drop];
    return asCase(headers, body);
  }),
  // A suffix of HTTP whitespace only is no tampering: header values are trimmed on the wire (Fetch spec).
  fc
    .string({ minLength: 1, maxLength: 10 })
    .filter((suffix) => !/^[\t\n\r ]*$/.test(suffix))
    .map((suffix): Tamper => (s, body, id) => {
      const headers = signValid(s, body, id);
      if (s === 'payments')
        headers['stripe-signature'] = Stripe.webhooks.generateTestHeaderString({ payload: body, secret: `${SECRETS.payments}${suffix}`, timestamp: NOW_S });
      else headers['svix-id'] = `${id}${suffix}`;
      return asCase(headers, body);
    }),
  fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data', '').map(
    (type): Tamper =>
      (s, body, id) =>
        asCase({ ...signValid(s, body, id), 'content-type': type }, body),
  ),
);

/** The database receiver's bearer covers no bytes: only the token can be tampered with. */
const bearerTampers = fc.oneof(
  fc.constantFrom('', 'Bearer', `bearer${SECRETS.database}`, `Basic ${SECRETS.database}`, `Token ${SECRETS.database}`),
  fc.tuple(fc.nat(), fc.integer({ min: 1, max: 93 })).map(([at, delta]) => {
    const i = at % SECRETS.database.length;
    const code = 0x21 + ((SECRETS.database.charCodeAt(i) - 0x21 + delta) % 94);
    return `Bearer ${SECRETS.database.slice(0, i)}${String.fromCharCode(code)}${SECRETS.database.slice(i + 1)}`;
  }),
  fc.stringMatching(/^[!-~]{1,5}$/).map((x) => `Bearer ${SECRETS.database}${x}`),
);

// ---- the app under test ----------------------------------------------------

describe('hostile input (fast-check, in-process)', () => {
  let database: TestDatabase;
  let fuzzApp: Hono;
  let fullApp: Hono;
  let clock: ManualClock;
  const capture = createCaptureLogger('in-process hostile-input log');
  const tried: Record<string, number> = {};
  const statuses: Record<string, number> = {};

  beforeAll(async () => {
    database = await createPgliteDatabase();
    clock = new ManualClock(NOW_MS);
    const build = (env: Record<string, string>) => {
      const config = testConfig({ LOG_LEVEL: 'debug', ...env });
      return createApp({
        config,
        db: database.db,
        writer: new EventWriter(database.db),
        verifiers: createVerifiers(config),
        clock,
        log: capture.log,
        metrics: new Metrics(),
      });
    };
    fuzzApp = build({ MAX_BODY_BYTES: String(FUZZ_MAX_BODY_BYTES) });
    fullApp = build({});
  });
  beforeEach(async () => emptyTables(database.db));
  afterAll(async () => {
    await database?.close();
    const scan = assertNoSecretLeaks();
    const total = Object.values(tried).reduce((a, b) => a + b, 0);
    reportFigures('4 hostile input (in-process)', { casesTried: total, bySet: tried, statuses, logLines: capture.lines(), secretScan: scan });
  });

  async function post(app: Hono, source: Source, c: Case): Promise<{ status: number; body: string }> {
    const res = await app.request(`/webhooks/${source}`, { method: 'POST', headers: c.headers, body: c.body as Uint8Array<ArrayBuffer> });
    const body = await res.text();
    statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    recordResponse(`hostile ${source}`, res.status, res.headers, body);
    return { status: res.status, body };
  }

  async function storedCount(): Promise<number> {
    return (await database.db.query<{ n: number }>('SELECT count(*)::int AS n FROM hookrun.webhook_events'))[0]!.n;
  }

  function expectRefused(result: { status: number; body: string }, source?: Source): void {
    // A wrong database bearer is an authentication failure (RFC 6750): 401, and 429 once an address has sent ten. Signatures that do not match: 400.
    expect(source === 'database' ? [400, 401, 413, 415, 429] : [400, 413, 415]).toContain(result.status);
    const parsed = JSON.parse(result.body) as { error?: { code?: unknown; message?: unknown } };
    expect(typeof parsed.error?.code).toBe('string');
    expect(typeof parsed.error?.message).toBe('string');
  }

  it.each(SOURCES)('%s: random headers, bodies, content types and signatures are refused with a 4xx and never stored', { timeout: 120_000 }, async (source) => {
    const arbitrary = fc.record({ sig: randomSignatureHeaders[source], type: contentType, extra: extraHeaders, body: hostileBody });
    await fc.assert(
      fc.asyncProperty(arbitrary, async ({ sig, type, extra, body }) => {
        expectRefused(await post(fuzzApp, source, { headers: { ...extra, 'content-type': type, ...sig }, body }), source);
      }),
      { numRuns: RUNS.unauthenticated, seed: Number(process.env.FC_SEED) || undefined },
    );
    tried[`${source} unauthenticated`] = RUNS.unauthenticated;
    expect(await storedCount()).toBe(0);
  });

  it.each(SOURCES)('%s: a valid delivery with any one tampering is refused and never stored', { timeout: 120_000 }, async (source) => {
    let counter = 0;
    const property: fc.IAsyncProperty<[string] | [Tamper]> =
      source === 'database'
        ? fc.asyncProperty(bearerTampers, async (authorization) => {
            const body = validBody(source, `t${counter++}`);
            expectRefused(
              await post(fuzzApp, source, {
                headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
                body: encoder.encode(body),
              }),
              source,
            );
          })
        : fc.asyncProperty(signedTampers, async (tamper) => {
            const id = `msg_t${counter++}`;
            expectRefused(await post(fuzzApp, source, tamper(source, validBody(source, id), id)));
          });
    await fc.assert(property as fc.IAsyncProperty<[unknown]>, { numRuns: RUNS.tampered, seed: Number(process.env.FC_SEED) || undefined });
    tried[`${source} tampered`] = RUNS.tampered;
    expect(await storedCount()).toBe(0);
    // Control: the untampered delivery is accepted, so the refusals above are not an artefact of the harness.
    const ok = await post(fuzzApp, source, asCase(signValid(source, validBody(source, 'control'), 'msg_control'), validBody(source, 'control')));
    expect(ok.status).toBe(200);
    expect(await storedCount()).toBe(1);
  });

  it.each(SOURCES)(
    '%s: hostile bodies behind a VALID signature answer 200 or 400, never 5xx; only accepted ones are stored',
    { timeout: 120_000 },
    async (source) => {
      let counter = 0;
      const accepted = new Set<string>();
      const bodies = fc.oneof(
        fc.json({ maxDepth: 5 }),
        fc.string({ unit: 'binary', maxLength: 300 }),
        realisticObject.map((o) => JSON.stringify(o)),
        fc.integer({ min: 60, max: 2000 }).map((n) => '['.repeat(n) + ']'.repeat(n)),
        fc.integer({ min: 60, max: 500 }).map((n) => '{"type":"INSERT","table":"t","schema":"s","id":"x","r":' + '{"a":'.repeat(n) + '1' + '}'.repeat(n) + '}'),
      );
      await fc.assert(
        fc.asyncProperty(bodies, async (body) => {
          const id = `msg_h${counter++}`;
          const result = await post(fuzzApp, source, asCase(signValid(source, body, id), body));
          expect([200, 400, 413]).toContain(result.status);
          // An unsigned database delivery has no idempotency key: each accepted one is its own event.
          if (result.status === 200) accepted.add(source === 'payments' ? (JSON.parse(body) as { id: string }).id : source === 'auth' ? id : `${id} ${body}`);
        }),
        { numRuns: RUNS.signedHostileBody, seed: Number(process.env.FC_SEED) || undefined },
      );
      tried[`${source} signed hostile body`] = RUNS.signedHostileBody;
      expect(await storedCount()).toBe(accepted.size);
    },
  );

  it.each(SOURCES)('%s: deeply nested JSON (1 MB) behind a valid signature answers 400 quickly', { timeout: 30_000 }, async (source) => {
    const depth = 300_000;
    const bodies = ['['.repeat(depth) + ']'.repeat(depth), '{"type":"INSERT","id":"x","a":' + '{"a":'.repeat(depth / 3) + '1' + '}'.repeat(depth / 3) + '}'];
    for (const body of bodies) {
      const started = performance.now();
      const result = await post(fullApp, source, asCase(signValid(source, body, `msg_deep${body.length}`), body));
      const ms = performance.now() - started;
      expect(result.status).toBe(400);
      expect(JSON.parse(result.body)).toMatchObject({ error: { code: 'invalid_payload' } });
      // Generous bound that still catches a recursive parse or a regex blow-up (which take seconds or crash).
      expect(ms).toBeLessThan(1_000);
    }
    tried[`${source} deep nesting`] = bodies.length;
    expect(await storedCount()).toBe(0);
  });

  it.each(SOURCES)('%s: bodies over the limit are refused 413, with or without Content-Length', async (source) => {
    const body = encoder.encode(`{"id":"evt_big","type":"t","pad":"${'x'.repeat(FUZZ_MAX_BODY_BYTES)}"}`);
    const headers = signValid(source, new TextDecoder().decode(body), 'msg_big');
    const declared = await post(fuzzApp, source, { headers: { ...headers, 'content-length': String(body.length) }, body });
    expect(declared.status).toBe(413);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < body.length; i += 1000) controller.enqueue(body.slice(i, i + 1000));
        controller.close();
      },
    });
    const res = await fuzzApp.request(`/webhooks/${source}`, { method: 'POST', headers, body: stream, duplex: 'half' } as RequestInit);
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ error: { code: 'payload_too_large' } });
    tried[`${source} oversized`] = 2;
    expect(await storedCount()).toBe(0);
  });
});
