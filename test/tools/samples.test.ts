import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { SOURCES, type Source } from '../../src/webhooks/providers/index.js';
import { EventWriter } from '../../src/db/event-writer.js';
import { createApp } from '../../src/http/app.js';
import { silentLogger } from '../../src/log.js';
import { Metrics } from '../../src/metrics.js';
import { SAMPLE_TYPES, UnknownSampleTypeError, buildSample, encodeSample, signSample } from '../../src/webhooks/samples.js';
import { createVerifiers } from '../../src/webhooks/verifiers.js';
import { testConfig } from '../helpers/config.js';
import { pgliteOnly, useTestDatabase } from '../helpers/db.js';

const SIGNING_DB_SECRET = 'whsec_' + Buffer.from('database-signing-secret-32-bytes').toString('base64');

describe.each(pgliteOnly())('samples verified by our receivers ($name)', (kind) => {
  const testDb = useTestDatabase(kind);

  function appFor(env: Record<string, string> = {}) {
    const config = testConfig(env);
    const clock = new ManualClock(Date.UTC(2026, 5, 1, 12));
    const app = createApp({
      config,
      db: testDb.db,
      writer: new EventWriter(testDb.db),
      verifiers: createVerifiers(config),
      clock,
      log: silentLogger,
      metrics: new Metrics(),
    });
    return { app, config, clock };
  }

  const cases = SOURCES.flatMap((source) => SAMPLE_TYPES[source].map((type) => [source, type] as [Source, string]));

  it.each(cases)('%s %s: signed sample → 200, stored with its type', async (source, type) => {
    const { app, config, clock } = appFor();
    // The body as the provider posts it (a form for Twilio), signed with the type (GitHub and Shopify send it in a header).
    const body = encodeSample(source, buildSample(source, type, undefined, clock.now()));
    const res = await app.request(`/webhooks/${source}`, {
      method: 'POST',
      body,
      headers: signSample(source, body, config, { nowMs: clock.now(), type, url: `http://localhost/webhooks/${source}` }),
    });
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { id: number; duplicate: boolean };
    expect(answer.duplicate).toBe(false);
    const rows = await testDb.db.query<{ type: string }>('SELECT type FROM hookrun.webhook_events WHERE id = $1', [answer.id]);
    expect(rows[0]?.type).toBe(type);
  });

  it('database samples signed with a whsec_ secret use webhook-* headers and verify', async () => {
    const { app, config, clock } = appFor({ DATABASE_WEBHOOK_SECRET: SIGNING_DB_SECRET });
    const body = JSON.stringify(buildSample('database', 'UPDATE', undefined, clock.now()));
    const headers = signSample('database', body, config, { nowMs: clock.now() });
    expect(headers['webhook-signature']).toMatch(/^v1,/);
    expect(headers.authorization).toBeUndefined();
    const res = await app.request('/webhooks/database', { method: 'POST', body, headers });
    expect(res.status).toBe(200);
  });

  it('a sample signed with another secret is refused', async () => {
    const { app, clock } = appFor();
    const other = testConfig({ AUTH_WEBHOOK_SECRET: SIGNING_DB_SECRET });
    const body = JSON.stringify(buildSample('auth', 'user.created', undefined, clock.now()));
    const res = await app.request('/webhooks/auth', { method: 'POST', body, headers: signSample('auth', body, other, { nowMs: clock.now() }) });
    expect(res.status).toBe(400);
  });
});

describe('buildSample', () => {
  it('gives fresh ids on every call', () => {
    const a = buildSample('payments', 'invoice.paid') as { id: string };
    const b = buildSample('payments', 'invoice.paid') as { id: string };
    expect(a.id).toMatch(/^evt_/);
    expect(a.id).not.toBe(b.id);
  });

  it('builds Clerk users whose primary email is one of their addresses, timestamps in ms', () => {
    const now = Date.UTC(2026, 0, 2);
    const event = buildSample('auth', 'user.updated', undefined, now) as {
      timestamp: number;
      data: { id: string; updated_at: number; created_at: number; email_addresses: { id: string }[]; primary_email_address_id: string };
    };
    expect(event.timestamp).toBe(now);
    expect(event.data.id).toMatch(/^user_/);
    expect(event.data.updated_at).toBe(now);
    expect(event.data.created_at).toBeLessThan(now);
    expect(event.data.email_addresses.map((e: { id: string }) => e.id)).toContain(event.data.primary_email_address_id);
    expect(buildSample('auth', 'user.deleted').data).toMatchObject({ deleted: true, object: 'user' });
  });

  it('builds Stripe subscriptions with a price, a period end and seconds timestamps', () => {
    const now = Date.UTC(2026, 0, 2);
    const event = buildSample('payments', 'customer.subscription.deleted', undefined, now) as {
      created: number;
      data: { object: { status: string; items: { data: { price: { id: string } }[] }; current_period_end: number; customer: string } };
    };
    expect(event.created).toBe(now / 1000);
    const sub = event.data.object;
    expect(sub.status).toBe('canceled');
    expect(sub.items.data[0]?.price.id).toMatch(/^price_/);
    expect(sub.current_period_end).toBeGreaterThan(event.created - 30 * 86_400);
    expect(sub.customer).toMatch(/^cus_/);
  });

  it('builds Supabase changes with the right record / old_record per type', () => {
    expect(buildSample('database', 'insert')).toMatchObject({ type: 'INSERT', schema: 'public', old_record: null });
    expect(buildSample('database', 'DELETE')).toMatchObject({ record: null });
    const update = buildSample('database', 'UPDATE') as { record: { id: string }; old_record: { id: string } };
    expect(update.record.id).toBe(update.old_record.id);
  });

  it('deep-merges overrides and refuses unknown types without them', () => {
    const event = buildSample('auth', 'user.created', { data: { id: 'user_fixed', first_name: 'Ada' } }) as { data: Record<string, unknown> };
    expect(event.data).toMatchObject({ id: 'user_fixed', first_name: 'Ada', object: 'user' });
    expect(() => buildSample('auth', 'session.created')).toThrow(UnknownSampleTypeError);
    expect(buildSample('auth', 'session.created', { data: { id: 'sess_1' } })).toMatchObject({ type: 'session.created', data: { id: 'sess_1' } });
  });

  it('names the missing secret instead of signing with nothing', () => {
    const config = testConfig({ AUTH_WEBHOOK_SECRET: '' });
    expect(() => signSample('auth', '{}', config)).toThrow(/AUTH_WEBHOOK_SECRET/);
  });
});
