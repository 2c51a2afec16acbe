import { Webhook } from 'standardwebhooks';
import { beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, countEvents, type TestApp } from '../helpers/app.js';
import { SECRETS } from '../helpers/config.js';
import { pgliteOnly, useTestDatabase } from '../helpers/db.js';

let seq = 0;
function clerkEvent(type = 'user.created') {
  seq += 1;
  const id = `user_${seq}`;
  return JSON.stringify({ data: { id, first_name: 'Ada', updated_at: Date.now() }, object: 'event', type, timestamp: Date.now() });
}

/** Headers exactly as Svix sends them for Clerk, signed by the standardwebhooks package. */
function svixHeaders(body: string, options: { secret?: string; id?: string; at?: Date; prefix?: 'svix' | 'webhook' } = {}) {
  const { secret = SECRETS.auth, id = `msg_${++seq}`, at = new Date(), prefix = 'svix' } = options;
  const signature = new Webhook(secret).sign(id, at, body);
  return {
    [`${prefix}-id`]: id,
    [`${prefix}-timestamp`]: String(Math.floor(at.getTime() / 1000)),
    [`${prefix}-signature`]: signature,
  };
}

describe.each(pgliteOnly())('POST /webhooks/auth on $name', (kind) => {
  const tdb = useTestDatabase(kind);
  let t: TestApp;
  const post = (body: string, headers: Record<string, string>) =>
    t.app.request('/webhooks/auth', { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });

  beforeEach(() => {
    t = createTestApp(tdb.db);
  });

  it('stores a Svix-signed Clerk event keyed by svix-id', async () => {
    const body = clerkEvent();
    const headers = svixHeaders(body);
    const res = await post(body, headers);
    expect(res.status).toBe(200);
    const rows = await tdb.db.query<{ key: string; type: string; source: string }>('SELECT key, type, source FROM hookrun.webhook_events');
    expect(rows).toEqual([{ key: headers['svix-id'], type: 'user.created', source: 'auth' }]);
  });

  it('a message id over 255 characters is a 400 before it reaches the inbox; 255 is fine', async () => {
    const long = await post(clerkEvent(), svixHeaders(clerkEvent(), { id: 'm'.repeat(256) }));
    expect(long.status).toBe(400);
    expect((await long.json()).error).toMatchObject({ code: 'invalid_signature', message: expect.stringContaining('longer than 255 characters') });
    const body = clerkEvent();
    expect((await post(body, svixHeaders(body, { id: 'm'.repeat(255) }))).status).toBe(200);
    expect(await countEvents(tdb.db)).toBe(1);
  });

  it('accepts the Standard Webhooks webhook-* headers too', async () => {
    const body = clerkEvent();
    expect((await post(body, svixHeaders(body, { prefix: 'webhook' }))).status).toBe(200);
  });

  it('answers a retried message (same svix-id) 200 and stores it once', async () => {
    const body = clerkEvent();
    const headers = svixHeaders(body, { id: 'msg_retry' });
    await post(body, headers);
    const again = await post(body, svixHeaders(body, { id: 'msg_retry' }));
    expect(again.status).toBe(200);
    expect((await again.json()).duplicate).toBe(true);
    expect(await countEvents(tdb.db)).toBe(1);
  });

  it('rejects missing svix headers with 400 missing_signature', async () => {
    const body = clerkEvent();
    const { 'svix-signature': _omit, ...partial } = svixHeaders(body);
    for (const headers of [{}, partial]) {
      const res = await post(body, headers);
      expect(res.status).toBe(400);
      expect((await res.json()).error.code).toBe('missing_signature');
    }
  });

  it('rejects a signature made with another secret', async () => {
    const body = clerkEvent();
    const other = 'whsec_' + Buffer.from('another-secret-another-secret!!!').toString('base64');
    const res = await post(body, svixHeaders(body, { secret: other }));
    expect((await res.json()).error.code).toBe('invalid_signature');
    expect(await countEvents(tdb.db)).toBe(0);
  });

  it('rejects a changed svix-id (the id is signed)', async () => {
    const body = clerkEvent();
    const headers = { ...svixHeaders(body), 'svix-id': 'msg_forged' };
    expect((await (await post(body, headers)).json()).error.code).toBe('invalid_signature');
  });

  it('accepts when any of several space-separated signatures matches', async () => {
    const body = clerkEvent();
    const headers = svixHeaders(body);
    headers['svix-signature'] = `v1,bm90LWl0 v2,abc ${headers['svix-signature']}`;
    expect((await post(body, headers)).status).toBe(200);
  });

  it('accepts a rotation list and the CLERK_WEBHOOK_SIGNING_SECRET alias', async () => {
    const fresh = 'whsec_' + Buffer.from('fresh-secret-fresh-secret-fresh!').toString('base64');
    t = createTestApp(tdb.db, { AUTH_WEBHOOK_SECRET: undefined, CLERK_WEBHOOK_SIGNING_SECRET: `${fresh},${SECRETS.auth}` });
    const a = clerkEvent();
    const b = clerkEvent();
    expect((await post(a, svixHeaders(a))).status).toBe(200);
    expect((await post(b, svixHeaders(b, { secret: fresh }))).status).toBe(200);
  });

  it('reads the CLERK_WEBHOOK_SECRET alias', async () => {
    t = createTestApp(tdb.db, { AUTH_WEBHOOK_SECRET: undefined, CLERK_WEBHOOK_SECRET: SECRETS.auth });
    const body = clerkEvent();
    expect((await post(body, svixHeaders(body))).status).toBe(200);
  });

  it('refuses timestamps beyond the tolerance in both directions', async () => {
    for (const offsetSeconds of [-301, 301]) {
      const body = clerkEvent();
      const res = await post(body, svixHeaders(body, { at: new Date(t.clock.now() + offsetSeconds * 1000) }));
      expect(res.status).toBe(400);
      expect((await res.json()).error.code).toBe('timestamp_out_of_tolerance');
    }
  });

  it('uses the injected clock, not the wall clock', async () => {
    const body = clerkEvent();
    const headers = svixHeaders(body);
    t.clock.advance(10 * 60 * 1000);
    expect((await (await post(body, headers)).json()).error.code).toBe('timestamp_out_of_tolerance');
  });

  it('rejects a non-numeric timestamp', async () => {
    const body = clerkEvent();
    const headers = { ...svixHeaders(body), 'svix-timestamp': 'yesterday' };
    expect((await (await post(body, headers)).json()).error.code).toBe('invalid_signature');
  });

  it('answers invalid_payload for a signed body without a type', async () => {
    const body = JSON.stringify({ data: {} });
    expect((await (await post(body, svixHeaders(body))).json()).error.code).toBe('invalid_payload');
  });

  it('fails closed with 503 not_configured naming every alias', async () => {
    t = createTestApp(tdb.db, { AUTH_WEBHOOK_SECRET: undefined });
    const body = clerkEvent();
    const res = await post(body, svixHeaders(body));
    expect(res.status).toBe(503);
    const { error } = await res.json();
    expect(error.code).toBe('not_configured');
    expect(error.message).toMatch(/AUTH_WEBHOOK_SECRET.*CLERK_WEBHOOK_SIGNING_SECRET.*CLERK_WEBHOOK_SECRET/);
  });
});
