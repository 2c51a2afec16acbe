import { randomBytes } from 'node:crypto';
import Stripe from 'stripe';
import { beforeEach, describe, expect, it } from 'vitest';
import { RejectedPayloadError } from '../../src/db/event-write-errors.js';
import { EventWriter } from '../../src/db/event-writer.js';
import { createTestApp, countEvents, type TestApp } from '../helpers/app.js';
import { SECRETS } from '../helpers/config.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';

const sign = (payload: string, secret: string = SECRETS.payments, timestamp?: number) =>
  Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp });

let seq = 0;
function stripeEvent(type = 'customer.subscription.updated', extra: Record<string, unknown> = {}) {
  seq += 1;
  return JSON.stringify({
    id: `evt_test_${Date.now()}_${seq}`,
    object: 'event',
    type,
    created: Math.floor(Date.now() / 1000),
    data: { object: { id: 'sub_1' } },
    ...extra,
  });
}

describe.each(databaseKinds())('POST /webhooks/payments on $name', (kind) => {
  const tdb = useTestDatabase(kind);
  let t: TestApp;
  const post = (body: string, headers: Record<string, string>) =>
    t.app.request('/webhooks/payments', { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });

  beforeEach(() => {
    t = createTestApp(tdb.db);
  });

  it('stores a Stripe-signed event before answering 200', async () => {
    const body = stripeEvent();
    const res = await post(body, { 'stripe-signature': sign(body) });
    expect(res.status).toBe(200);
    const answer = await res.json();
    expect(answer).toMatchObject({ received: true, duplicate: false });
    const rows = await tdb.db.query<{ id: number; key: string; type: string; status: string; payload: { id: string } }>(
      'SELECT id, key, type, status, payload FROM hookrun.webhook_events',
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: answer.id, key: JSON.parse(body).id, type: 'customer.subscription.updated', status: 'pending' });
    expect(rows[0]!.payload.id).toBe(JSON.parse(body).id);
  });

  it('answers a duplicate delivery 200 and stores it once', async () => {
    const body = stripeEvent();
    const first = await (await post(body, { 'stripe-signature': sign(body) })).json();
    const again = await post(body, { 'stripe-signature': sign(body) });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ received: true, id: first.id, duplicate: true });
    expect(await countEvents(tdb.db)).toBe(1);
  });

  it('stores concurrent deliveries of the same event once', async () => {
    const body = stripeEvent();
    const answers = await Promise.all(Array.from({ length: 10 }, () => post(body, { 'stripe-signature': sign(body) })));
    expect(answers.map((r) => r.status)).toEqual(Array(10).fill(200));
    const bodies = await Promise.all(answers.map((r) => r.json()));
    expect(bodies.filter((b) => !b.duplicate)).toHaveLength(1);
    expect(await countEvents(tdb.db)).toBe(1);
  });

  it('stores unhandled event types too', async () => {
    const body = stripeEvent('some.future.event');
    expect((await post(body, { 'stripe-signature': sign(body) })).status).toBe(200);
    expect(await countEvents(tdb.db)).toBe(1);
  });

  it('rejects a missing Stripe-Signature with 400 missing_signature', async () => {
    const res = await post(stripeEvent(), {});
    expect(res.status).toBe(400);
    expect((await res.json()).error.code).toBe('missing_signature');
  });

  it('rejects a signature made with another secret', async () => {
    const body = stripeEvent();
    const res = await post(body, { 'stripe-signature': sign(body, 'whsec_someone_else') });
    expect(res.status).toBe(400);
    expect((await res.json()).error.code).toBe('invalid_signature');
    expect(await countEvents(tdb.db)).toBe(0);
  });

  it('rejects a body changed after signing (verification is over the raw bytes)', async () => {
    const body = stripeEvent();
    const reformatted = JSON.stringify(JSON.parse(body), null, 2);
    const res = await post(reformatted, { 'stripe-signature': sign(body) });
    expect((await res.json()).error.code).toBe('invalid_signature');
  });

  it('rejects a malformed Stripe-Signature header', async () => {
    const body = stripeEvent();
    for (const header of ['garbage', 't=abc,v1=00', `t=${Math.floor(Date.now() / 1000)}`]) {
      const res = await post(body, { 'stripe-signature': header });
      expect(res.status).toBe(400);
      expect((await res.json()).error.code).toBe('invalid_signature');
    }
  });

  it('ignores v0 signatures: a header with only a matching v0 is refused', async () => {
    const body = stripeEvent();
    const header = sign(body).replace('v1=', 'v0=');
    expect((await (await post(body, { 'stripe-signature': header })).json()).error.code).toBe('invalid_signature');
  });

  it('accepts when any v1 signature matches (Stripe sends several during secret roll)', async () => {
    const body = stripeEvent();
    const good = sign(body);
    const bad = sign(body, 'whsec_old').split(',')[1]!;
    const res = await post(body, { 'stripe-signature': `${good.split(',')[0]},${bad},${good.split(',')[1]}` });
    expect(res.status).toBe(200);
  });

  it('accepts a secret rotation list: any configured secret may match', async () => {
    t = createTestApp(tdb.db, { PAYMENTS_WEBHOOK_SECRET: `whsec_new, ${SECRETS.payments}` });
    const body = stripeEvent();
    expect((await post(body, { 'stripe-signature': sign(body) })).status).toBe(200);
    const other = stripeEvent();
    expect((await post(other, { 'stripe-signature': sign(other, 'whsec_new') })).status).toBe(200);
  });

  it('reads the STRIPE_WEBHOOK_SECRET alias', async () => {
    t = createTestApp(tdb.db, { PAYMENTS_WEBHOOK_SECRET: undefined, STRIPE_WEBHOOK_SECRET: 'whsec_alias' });
    const body = stripeEvent();
    expect((await post(body, { 'stripe-signature': sign(body, 'whsec_alias') })).status).toBe(200);
  });

  it('refuses a timestamp older than the tolerance', async () => {
    const body = stripeEvent();
    const header = sign(body, SECRETS.payments, Math.floor(t.clock.now() / 1000) - 301);
    const res = await post(body, { 'stripe-signature': header });
    expect(res.status).toBe(400);
    expect((await res.json()).error.code).toBe('timestamp_out_of_tolerance');
  });

  it('refuses a timestamp further in the future than the tolerance (stripe-node only checks the past)', async () => {
    const body = stripeEvent();
    const header = sign(body, SECRETS.payments, Math.floor(t.clock.now() / 1000) + 301);
    const res = await post(body, { 'stripe-signature': header });
    expect(res.status).toBe(400);
    expect((await res.json()).error.code).toBe('timestamp_out_of_tolerance');
  });

  it('two t= values cannot slip a future timestamp past the check: the last one counts, as in stripe-node', async () => {
    const body = stripeEvent();
    const now = Math.floor(t.clock.now() / 1000);
    const future = sign(body, SECRETS.payments, now + 3600); // t=<future>,v1=<valid for future>
    const res = await post(body, { 'stripe-signature': `t=${now},${future}` });
    expect(res.status).toBe(400);
    expect((await res.json()).error.code).toBe('timestamp_out_of_tolerance');
    expect(await countEvents(tdb.db)).toBe(0);
  });

  it('accepts a timestamp just inside the tolerance on both sides', async () => {
    for (const offset of [-299, 299]) {
      const body = stripeEvent();
      const header = sign(body, SECRETS.payments, Math.floor(t.clock.now() / 1000) + offset);
      expect((await post(body, { 'stripe-signature': header })).status).toBe(200);
    }
  });

  it('honours a configured tolerance', async () => {
    t = createTestApp(tdb.db, { WEBHOOK_TOLERANCE_SECONDS: '10' });
    const body = stripeEvent();
    const header = sign(body, SECRETS.payments, Math.floor(t.clock.now() / 1000) - 20);
    expect((await (await post(body, { 'stripe-signature': header })).json()).error.code).toBe('timestamp_out_of_tolerance');
  });

  it('answers 400 invalid_payload for a signed body that is not JSON', async () => {
    const body = 'not json at all';
    const res = await post(body, { 'stripe-signature': sign(body) });
    expect(res.status).toBe(400);
    expect((await res.json()).error.code).toBe('invalid_payload');
    expect(await countEvents(tdb.db)).toBe(0);
  });

  it('answers 400 invalid_payload for signed JSON without an id or type', async () => {
    for (const body of ['[1,2]', '{"type":"x"}', '{"id":"evt_1"}', '{"id":5,"type":"x"}']) {
      const res = await post(body, { 'stripe-signature': sign(body) });
      expect((await res.json()).error.code).toBe('invalid_payload');
    }
    expect(await countEvents(tdb.db)).toBe(0);
  });

  it('stores signed JSON with a \\u0000 escape as sent (the payload keeps its text), with its batch-mates', async () => {
    const odd = JSON.stringify({ id: 'evt_nul', type: 'x', note: 'a\u0000b' });
    const good = stripeEvent();
    const [oddRes, goodRes] = await Promise.all([post(odd, { 'stripe-signature': sign(odd) }), post(good, { 'stripe-signature': sign(good) })]);
    expect(oddRes.status).toBe(200);
    expect(goodRes.status).toBe(200);
    expect(await countEvents(tdb.db)).toBe(2);
    const [row] = await tdb.db.query<{ text: string }>(`SELECT payload::text AS text FROM hookrun.webhook_events WHERE key = 'evt_nul'`);
    expect(row!.text).toBe(odd);
  });

  it('a row the index cannot hold (SQLSTATE 54000) is refused alone: its batch-mates are stored', async () => {
    const writer = new EventWriter(tdb.db);
    const writes = Array.from({ length: 10 }, (_, i) => writer.write({ source: 'payments', key: `evt_batch_${i}`, type: 'x', payloadJson: '{}' }));
    const huge = writer.write({ source: 'payments', key: `evt_${randomBytes(4000).toString('base64')}`, type: 'x', payloadJson: '{}' }); // incompressible, past btree's ~2.7 KB
    const results = await Promise.allSettled([...writes, huge]);
    expect(results.slice(0, 10).map((r) => r.status)).toEqual(new Array(10).fill('fulfilled'));
    expect(results[10]).toMatchObject({ status: 'rejected', reason: expect.any(RejectedPayloadError) });
    expect(await countEvents(tdb.db)).toBe(10);
  });

  it('answers 400 quickly for deeply nested JSON behind a valid signature', async () => {
    const body = `{"id":"evt_deep","type":"x","a":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    const res = await post(body, { 'stripe-signature': sign(body) });
    expect(res.status).toBe(400);
    expect((await res.json()).error.code).toBe('invalid_payload');
  });

  it('answers 413 payload_too_large above the body limit and stores nothing', async () => {
    t = createTestApp(tdb.db, { MAX_BODY_BYTES: '2048' });
    const body = stripeEvent('x', { padding: 'x'.repeat(4096) });
    const res = await post(body, { 'stripe-signature': sign(body) });
    expect(res.status).toBe(413);
    expect((await res.json()).error.code).toBe('payload_too_large');
    expect(await countEvents(tdb.db)).toBe(0);
  });

  it('answers 413 for a chunked body with no Content-Length that grows past the limit', async () => {
    t = createTestApp(tdb.db, { MAX_BODY_BYTES: '2048' });
    const chunk = new TextEncoder().encode('x'.repeat(1024));
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 4; i++) controller.enqueue(chunk);
        controller.close();
      },
    });
    const res = await t.app.request('/webhooks/payments', {
      method: 'POST',
      body: stream,
      headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' },
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
  });

  it('answers 415 for a non-JSON content type', async () => {
    const body = stripeEvent();
    const res = await t.app.request('/webhooks/payments', {
      method: 'POST',
      body,
      headers: { 'content-type': 'text/plain', 'stripe-signature': sign(body) },
    });
    expect(res.status).toBe(415);
    expect((await res.json()).error.code).toBe('unsupported_media_type');
  });

  it('fails closed with 503 not_configured when no secret is set, naming the env vars', async () => {
    t = createTestApp(tdb.db, { PAYMENTS_WEBHOOK_SECRET: undefined });
    const body = stripeEvent();
    const res = await post(body, { 'stripe-signature': sign(body) });
    expect(res.status).toBe(503);
    const { error } = await res.json();
    expect(error.code).toBe('not_configured');
    expect(error.message).toContain('PAYMENTS_WEBHOOK_SECRET');
    expect(error.message).toContain('STRIPE_WEBHOOK_SECRET');
    expect(await countEvents(tdb.db)).toBe(0);
  });

  it('answers 405 for GET', async () => {
    const res = await t.app.request('/webhooks/payments');
    expect(res.status).toBe(405);
    expect((await res.json()).error.code).toBe('method_not_allowed');
  });

  it('counts accepted, duplicate and rejected deliveries in metrics', async () => {
    const body = stripeEvent();
    await post(body, { 'stripe-signature': sign(body) });
    await post(body, { 'stripe-signature': sign(body) });
    await post(body, {});
    const text = await t.metrics.registry.metrics();
    expect(text).toMatch(/hookrun_events_received_total\{source="payments",outcome="accepted",reason=""\} 1/);
    expect(text).toMatch(/hookrun_events_received_total\{source="payments",outcome="duplicate",reason=""\} 1/);
    expect(text).toMatch(/hookrun_events_received_total\{source="payments",outcome="rejected",reason="missing_signature"\} 1/);
  });
});

describe('start-up cost of the Stripe verifier', () => {
  it("loads stripe-node's webhook module by path, not the whole client (~300-450 ms of start-up)", async () => {
    const { STRIPE_VERIFIER_LOAD_PATH } = await import('../../src/webhooks/providers/stripe.js');
    expect(STRIPE_VERIFIER_LOAD_PATH).toBe('fast');
  });
});
