import { Webhook } from 'standardwebhooks';
import { beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, countEvents, type TestApp } from '../helpers/app.js';
import { SECRETS } from '../helpers/config.js';
import { pgliteOnly, useTestDatabase } from '../helpers/db.js';
import { drain, testWorker } from '../inbox/fixtures.js';

let seq = 0;
function change(type = 'INSERT', table = 'profiles') {
  seq += 1;
  return JSON.stringify({ type, table, schema: 'public', record: { id: seq, name: 'x' }, old_record: null });
}

describe.each(pgliteOnly())('POST /webhooks/database on $name', (kind) => {
  const tdb = useTestDatabase(kind);
  let t: TestApp;
  const post = (body: string, headers: Record<string, string>) =>
    t.app.request('/webhooks/database', { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
  const bearer = { authorization: `Bearer ${SECRETS.database}` };

  beforeEach(() => {
    t = createTestApp(tdb.db);
  });

  it('stores a Supabase change authenticated by bearer, with a key of its own', async () => {
    const res = await post(change(), bearer);
    expect(res.status).toBe(200);
    expect((await res.json()).duplicate).toBe(false);
    const rows = await tdb.db.query<{ key: string; type: string }>('SELECT key, type FROM hookrun.webhook_events');
    expect(rows).toMatchObject([{ key: expect.stringMatching(/^delivery_[0-9a-f-]{36}$/), type: 'INSERT' }]);
  });

  it('a row going A→B, B→A, A→B: the third body repeats the first and is still a new event, processed', async () => {
    const toB = JSON.stringify({ type: 'UPDATE', table: 'profiles', schema: 'public', record: { id: 7, name: 'B' }, old_record: { id: 7, name: 'A' } });
    const toA = JSON.stringify({ type: 'UPDATE', table: 'profiles', schema: 'public', record: { id: 7, name: 'A' }, old_record: { id: 7, name: 'B' } });
    for (const body of [toB, toA, toB]) expect((await (await post(body, bearer)).json()).duplicate).toBe(false);
    expect(await countEvents(tdb.db)).toBe(3);
    await drain(testWorker(tdb.db).worker);
    const statuses = await tdb.db.query<{ status: string }>('SELECT status FROM hookrun.webhook_events ORDER BY id');
    expect(statuses.map((r) => r.status)).toEqual(['processed', 'processed', 'processed']);
  });

  it('an Idempotency-Key header is the key: a retry with it is stored once', async () => {
    const body = change();
    const keyed = { ...bearer, 'idempotency-key': 'profiles-1-v3' };
    expect((await (await post(body, keyed)).json()).duplicate).toBe(false);
    expect((await (await post(body, keyed)).json()).duplicate).toBe(true);
    expect((await (await post(body, { ...bearer, 'idempotency-key': 'profiles-1-v4' })).json()).duplicate).toBe(false);
    expect((await tdb.db.query<{ key: string }>('SELECT key FROM hookrun.webhook_events ORDER BY id')).map((r) => r.key)).toEqual([
      'profiles-1-v3',
      'profiles-1-v4',
    ]);
  });

  it('an Idempotency-Key over 255 characters is refused, nothing stored', async () => {
    const res = await post(change(), { ...bearer, 'idempotency-key': 'k'.repeat(256) });
    expect(res.status).toBe(400);
    expect((await res.json()).error.code).toBe('invalid_payload');
    expect(await countEvents(tdb.db)).toBe(0);
  });

  it('a missing, wrong or malformed bearer is 401 unauthorized (RFC 6750), nothing stored', async () => {
    const body = change();
    for (const headers of [
      {} as Record<string, string>,
      { authorization: 'Bearer nope' },
      { authorization: SECRETS.database },
      { authorization: `Basic ${SECRETS.database}` },
    ]) {
      const res = await post(body, headers);
      expect(res.status).toBe(401);
      expect((await res.json()).error.code).toBe('unauthorized');
    }
    expect(await countEvents(tdb.db)).toBe(0);
  });

  it('accepts a Standard Webhooks signature when the secret is a whsec_ key, keyed by webhook-id', async () => {
    const secret = 'whsec_' + Buffer.from('database-signing-secret-32bytes!').toString('base64');
    t = createTestApp(tdb.db, { DATABASE_WEBHOOK_SECRET: secret });
    const body = change('UPDATE');
    const at = new Date(t.clock.now());
    const res = await post(body, {
      'webhook-id': 'msg_db_1',
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign('msg_db_1', at, body),
    });
    expect(res.status).toBe(200);
    expect((await tdb.db.query<{ key: string }>('SELECT key FROM hookrun.webhook_events'))[0]!.key).toBe('msg_db_1');
  });

  it('never accepts a whsec_ signing key as a bearer (it would skip the timestamp check: a captured request replays forever)', async () => {
    const secret = 'whsec_' + Buffer.from('database-signing-secret-32bytes!').toString('base64');
    t = createTestApp(tdb.db, { DATABASE_WEBHOOK_SECRET: secret });
    const res = await post(change(), { authorization: `Bearer ${secret}` });
    expect(res.status).toBe(401);
    const { error } = await res.json();
    expect(error.code).toBe('unauthorized');
    expect(error.message).toContain('never accepted as a bearer');
    t = createTestApp(tdb.db, { DATABASE_WEBHOOK_SECRET: `${secret},${SECRETS.database}` }); // a rotation list with both forms
    expect((await post(change(), { authorization: `Bearer ${secret}` })).status).toBe(401);
    expect((await post(change(), bearer)).status).toBe(200);
    expect(await countEvents(tdb.db)).toBe(1);
  });

  it('answers invalid_payload for a change that is not Supabase-shaped', async () => {
    for (const body of [
      JSON.stringify({ type: 'TRUNCATE', table: 't', schema: 'public' }),
      JSON.stringify({ type: 'INSERT', schema: 'public' }),
      '"just a string"',
    ]) {
      const res = await post(body, bearer);
      expect(res.status).toBe(400);
      expect((await res.json()).error.code).toBe('invalid_payload');
    }
  });

  it('fails closed with 503 not_configured when DATABASE_WEBHOOK_SECRET is unset', async () => {
    t = createTestApp(tdb.db, { DATABASE_WEBHOOK_SECRET: undefined });
    const res = await post(change(), bearer);
    expect(res.status).toBe(503);
    expect((await res.json()).error.code).toBe('not_configured');
  });
});
