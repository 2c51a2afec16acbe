import { createHash } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, countEvents, type TestApp } from '../helpers/app.js';
import { SECRETS } from '../helpers/config.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';

let seq = 0;
function change(type = 'INSERT', table = 'profiles') {
  seq += 1;
  return JSON.stringify({ type, table, schema: 'public', record: { id: seq, name: 'x' }, old_record: null });
}

describe.each(databaseKinds())('POST /webhooks/database on $name', (kind) => {
  const tdb = useTestDatabase(kind);
  let t: TestApp;
  const post = (body: string, headers: Record<string, string>) =>
    t.app.request('/webhooks/database', { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
  const bearer = { authorization: `Bearer ${SECRETS.database}` };

  beforeEach(() => {
    t = createTestApp(tdb.db);
  });

  it('stores a Supabase change authenticated by bearer, keyed by the SHA-256 of the body', async () => {
    const body = change();
    expect((await post(body, bearer)).status).toBe(200);
    const rows = await tdb.db.query<{ key: string; type: string }>('SELECT key, type FROM webhook_events');
    expect(rows).toEqual([{ key: createHash('sha256').update(body).digest('hex'), type: 'INSERT' }]);
  });

  it('stores the same body once', async () => {
    const body = change();
    await post(body, bearer);
    expect((await (await post(body, bearer)).json()).duplicate).toBe(true);
    expect(await countEvents(tdb.db)).toBe(1);
  });

  it('rejects a missing Authorization header with missing_signature and a wrong token with invalid_signature', async () => {
    const body = change();
    expect((await (await post(body, {})).json()).error.code).toBe('missing_signature');
    expect((await (await post(body, { authorization: 'Bearer nope' })).json()).error.code).toBe('invalid_signature');
    expect((await (await post(body, { authorization: SECRETS.database })).json()).error.code).toBe('invalid_signature');
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
    expect((await tdb.db.query<{ key: string }>('SELECT key FROM webhook_events'))[0]!.key).toBe('msg_db_1');
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
