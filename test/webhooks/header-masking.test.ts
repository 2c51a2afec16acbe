import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import fc from 'fast-check';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { incomingOf } from '../../src/webhooks/body-reader.js';
import { entriesOfRaw, isSecretHeader, maskedHeaders, PROVIDER_SIGNATURE_HEADERS } from '../../src/webhooks/request-record.js';

/** Credential-bearing headers senders and proxies add: none may be kept in clear. */
const CREDENTIALS: Record<string, string> = {
  'x-vercel-protection-bypass': 'bypass-secret-0123456789',
  'cf-access-jwt-assertion': 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.sig',
  'x-supabase-auth': 'supabase-auth-value',
  'x-auth-key': 'auth-key-value',
  'x-password': 'hunter2-hunter2',
  'x-passwd': 'passwd-value',
  'x-session-id': 'session-id-value',
  'x-credentials': 'user:pass',
  authorization: 'Bearer sk_live_never',
  'proxy-authorization': 'Basic dXNlcjpwYXNz',
  cookie: 'session=abc',
  'x-api-key': 'api-key-value',
  'x-access-token': 'access-token-value',
  'x-webhook-secret': 'webhook-secret-value',
};
/** Headers that carry nothing secret and stay readable. */
const HARMLESS: Record<string, string> = {
  'content-type': 'application/json',
  'user-agent': 'GitHub-Hookshot/abc123',
  'x-github-event': 'issues',
  'x-github-delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958',
  'x-forwarded-for': '203.0.113.7',
  'svix-id': 'msg_2abc',
};

describe('the headers kept beside an event', () => {
  it('masks every credential-bearing header by its name, and leaves the harmless ones readable', () => {
    const kept = maskedHeaders(new Headers({ ...CREDENTIALS, ...HARMLESS }));
    for (const [name, value] of Object.entries(CREDENTIALS)) {
      expect(kept[name], name).toBe(`[masked, ${value.length} chars]`);
      expect(JSON.stringify(kept)).not.toContain(value);
    }
    for (const [name, value] of Object.entries(HARMLESS)) expect(kept[name], name).toBe(value);
  });

  it("keeps every shipped provider's signature header masked, and a sender's own credential header", () => {
    for (const name of PROVIDER_SIGNATURE_HEADERS) expect(isSecretHeader(name), name).toBe(true);
    expect(isSecretHeader('x-acme-proof')).toBe(false);
    expect(isSecretHeader('x-acme-proof', { credentialHeaders: ['x-acme-proof'] })).toBe(true);
  });

  it("reads Node's raw header list into the same record as the request's Headers: names, order, repeats, cookies, padding", () => {
    const name = fc.oneof(
      fc.constantFrom('Content-Type', 'cookie', 'Cookie', 'set-cookie', 'X-Trace', 'x-trace', 'accept', 'Stripe-Signature', 'x-api-key', 'a', 'Z-last'),
      fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,12}$/),
    );
    const value = fc.tuple(fc.constantFrom('', ' ', '\t', '  '), fc.stringMatching(/^[!-~]([ -~]{0,20}[!-~])?$/), fc.constantFrom('', ' ', '\t'));
    fc.assert(
      fc.property(fc.array(fc.tuple(name, value), { maxLength: 12 }), (pairs) => {
        const raw = pairs.flatMap(([n, [before, text, after]]) => [n, `${before}${text}${after}`]);
        const headers = new Headers();
        for (let i = 0; i < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
        expect(JSON.stringify(Object.fromEntries(entriesOfRaw(raw)))).toBe(JSON.stringify(Object.fromEntries(headers)));
        expect(JSON.stringify(maskedHeaders(new Headers(), undefined, raw))).toBe(JSON.stringify(maskedHeaders(headers)));
      }),
      { numRuns: 300 },
    );
  });

  it("reads them from the Node request a receiver is served, as @hono/node-server's Headers list them", async () => {
    let kept: { raw: string; listed: string } | undefined;
    const app = new Hono().post('/', (c) => {
      const raw = incomingOf(c)?.rawHeaders;
      expect(raw, 'the Node request behind the context').toBeDefined();
      kept = { raw: JSON.stringify(maskedHeaders(c.req.raw.headers, undefined, raw)), listed: JSON.stringify(maskedHeaders(c.req.raw.headers)) };
      return c.text('ok');
    });
    const server = await new Promise<ReturnType<typeof serve>>((done) => {
      const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => done(s));
    });
    try {
      const { port } = server.address() as AddressInfo;
      await new Promise<void>((done, fail) => {
        const sent = httpRequest({
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/',
          headers: { 'X-Trace': ['one', 'two'], cookie: ['a=1', 'b=2'], 'Stripe-Signature': 't=1,v1=abc', 'content-type': 'application/json' },
        });
        sent.on('response', (response) => response.resume().on('end', done)).on('error', fail);
        sent.end('{}');
      });
      expect(kept!.raw).toBe(kept!.listed);
      expect(JSON.parse(kept!.raw)).toMatchObject({ 'x-trace': 'one, two', 'stripe-signature': '[masked, 10 chars]', cookie: '[masked, 8 chars]' });
    } finally {
      await new Promise((done) => server.close(done));
    }
  });
});
