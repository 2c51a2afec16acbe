import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/client.js';
import type { Database } from '../../src/db/database.js';
import { createTestApp } from '../helpers/app.js';
import { SECRETS } from '../helpers/config.js';
import { createPgliteDatabase, type TestDatabase } from '../helpers/db.js';

describe('health and readiness', () => {
  let tdb: TestDatabase;
  beforeAll(async () => {
    tdb = await createPgliteDatabase();
  });
  afterAll(async () => {
    await tdb.close();
  });

  it('GET /health answers 200 while the process is up', async () => {
    const res = await createTestApp(tdb.db).app.request('/health');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('GET /ready answers 200 when the database answers', async () => {
    const res = await createTestApp(tdb.db).app.request('/ready');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ready', database: 'pglite' });
  });

  it('unknown routes answer the JSON error contract', async () => {
    const res = await createTestApp(tdb.db).app.request('/nope');
    expect(res.status).toBe(404);
    expect((await res.json()).error.code).toBe('not_found');
  });
});

describe('database unavailable', () => {
  let down: Database;
  beforeAll(async () => {
    // Nothing listens on port 1: every connection is refused at once.
    down = await openDatabase({ databaseUrl: 'postgres://postgres@127.0.0.1:1/test' });
  });
  afterAll(async () => {
    await down.close();
  });

  it('GET /ready answers 503 unavailable while /health stays 200', async () => {
    const { app } = createTestApp(down);
    const ready = await app.request('/ready');
    expect(ready.status).toBe(503);
    expect((await ready.json()).error.code).toBe('unavailable');
    expect((await app.request('/health')).status).toBe(200);
  });

  it('a verified event that cannot be stored answers 503 unavailable (the provider retries)', async () => {
    const { app } = createTestApp(down);
    const body = JSON.stringify({ id: 'evt_down', type: 'invoice.paid' });
    const res = await app.request('/webhooks/payments', {
      method: 'POST',
      body,
      headers: {
        'content-type': 'application/json',
        'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload: body, secret: SECRETS.payments }),
      },
    });
    expect(res.status).toBe(503);
    const { error } = await res.json();
    expect(error.code).toBe('unavailable');
    expect(JSON.stringify(error)).not.toContain('postgres://');
  });
});
