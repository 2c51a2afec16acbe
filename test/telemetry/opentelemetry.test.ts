import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { startService, type RunningService } from '../../src/service.js';
import { SECRETS, testConfig } from '../helpers/config.js';
import { createPgliteDatabase, type TestDatabase } from '../helpers/db.js';
import { freePort } from '../helpers/free-port.js';
import { startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.js';
import { pollUntil } from '../helpers/poll.js';
import { HOOKRUN, useProjectDirs } from '../helpers/project-dir.js';
import { acknowledged, checkoutCompleted, sendDelivery } from '../helpers/signed-deliveries.js';

/** A job's HTTP target on 127.0.0.1 that keeps the `traceparent` of each call. */
async function startTarget(): Promise<{ url: string; traceparents: string[]; close(): Promise<void> }> {
  const traceparents: string[] = [];
  const server: Server = createServer((req, res) => {
    traceparents.push(String(req.headers.traceparent));
    res.writeHead(200).end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/ping`,
    traceparents,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A project handler with flow options: its deliveries go through flow control's runner, not the inbox's batch. */
const FLOW_HANDLER = `import { defineHandler } from ${HOOKRUN};\nexport default defineHandler({ on: ['stripe:checkout.session.completed'], concurrency: { limit: 1 }, async run() {} });\n`;

describe('OpenTelemetry through the real OTLP/HTTP exporter to a local collector', () => {
  const project = useProjectDirs();
  let collector: OtlpReceiver;
  let target: Awaited<ReturnType<typeof startTarget>>;
  let testDb: TestDatabase;
  let service: RunningService | undefined;
  let dir: string;
  beforeAll(async () => {
    [collector, target, testDb] = await Promise.all([startOtlpReceiver(), startTarget(), createPgliteDatabase()]);
    dir = mkdtempSync(join(tmpdir(), 'hookrun-otel-'));
  });
  afterEach(async () => {
    await service?.stop();
    service = undefined;
  });
  afterAll(async () => {
    await Promise.all([collector.close(), target.close(), testDb.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  /** hookrun as inside a serverless function: no loops between requests, telemetry to the collector. */
  const startServerless = () =>
    startService(testConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url }), {
      log: silentLogger,
      db: testDb.db,
      http: false,
      scheduler: false,
      background: false,
    });

  it('a signed webhook, its handler and a cron run to an HTTP target are spans with their attributes; the target gets the run span’s traceparent; the metrics go too', async () => {
    const platform = join(dir, 'platform.json');
    writeFileSync(platform, JSON.stringify({ crons: [{ name: 'ping-target', url: target.url, schedule: '0 1 * * *' }] }));
    const port = await freePort();
    const config = testConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      PORT: String(port),
      HOST: '127.0.0.1',
      PLATFORM_CONFIG: platform,
      HOOKRUN_PROJECT: project({ 'handlers/notify-crm.ts': FLOW_HANDLER }),
    });
    service = await startService(config, { log: silentLogger, db: testDb.db, scheduler: false });

    const delivery = checkoutCompleted('otel');
    const answer = await sendDelivery(service.url!, delivery);
    expect(acknowledged(answer), JSON.stringify(answer)).toBe(true);
    const id = (JSON.parse((answer as { body: string }).body) as { id: number }).id;
    await pollUntil('the event processed', 10_000, async () => {
      const [row] = await testDb.db.query<{ status: string }>('SELECT status FROM hookrun.webhook_events WHERE id = $1', [id]);
      return row?.status === 'processed' ? true : undefined;
    });
    const cron = await fetch(`${service.url}/cron/ping-target`, { method: 'POST', headers: { authorization: `Bearer ${SECRETS.cron}` } });
    expect(cron.status).toBe(200);
    await service.stop(); // flushes the batched spans and a last metric reading
    service = undefined;

    const received = collector.spans.find((s) => s.name === 'POST /webhooks/payments');
    expect(received).toMatchObject({
      kind: 2, // server
      attributes: {
        'http.request.method': 'POST',
        'http.route': '/webhooks/payments',
        'http.response.status_code': 200,
        'hookrun.event.id': id,
        'hookrun.event.source': 'payments',
        'hookrun.event.type': 'checkout.session.completed',
        'hookrun.event.key': delivery.key,
        'hookrun.event.duplicate': false,
        'hookrun.outcome': 'accepted',
      },
      resource: { 'service.name': 'hookrun' },
    });
    const handled = collector.spans.find((s) => s.attributes['hookrun.handler'] === 'stripe-mirror');
    expect(handled).toMatchObject({
      name: 'handle payments checkout.session.completed',
      kind: 5, // consumer
      attributes: {
        'hookrun.event.id': id,
        'hookrun.event.source': 'payments',
        'hookrun.handler': 'stripe-mirror',
        'hookrun.delivery.attempt': 1,
        'hookrun.outcome': 'processed',
      },
    });
    expect(collector.spans.find((s) => s.attributes['hookrun.handler'] === 'notify-crm')).toMatchObject({
      name: 'handle payments checkout.session.completed',
      attributes: { 'hookrun.event.id': id, 'hookrun.outcome': 'processed', 'hookrun.delivery.attempt': 1 },
    });
    const run = collector.spans.find((s) => s.name === 'cron ping-target');
    expect(run).toMatchObject({ attributes: { 'hookrun.cron.job': 'ping-target', 'hookrun.cron.trigger': 'http', 'hookrun.outcome': 'succeeded' } });
    expect(target.traceparents).toHaveLength(1);
    const [, traceId, parentId] = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(target.traceparents[0]!)!;
    expect({ traceId, parentId }).toEqual({ traceId: run!.traceId, parentId: run!.spanId });

    const metric = (name: string) => collector.metrics.filter((m) => m.name === name).at(-1);
    expect(metric('hookrun_events_received_total')).toMatchObject({
      kind: 'sum',
      points: expect.arrayContaining([{ attributes: { source: 'payments', outcome: 'accepted', reason: '' }, value: 1 }]),
    });
    expect(metric('hookrun_cron_runs_total')?.points).toContainEqual({ attributes: { job: 'ping-target', trigger: 'http', status: 'succeeded' }, value: 1 });
    const processing = metric('hookrun_event_processing_seconds');
    expect(processing?.kind).toBe('histogram');
    const histogram = processing!.points[0]!;
    expect(histogram).toMatchObject({ attributes: { source: 'payments', outcome: 'processed' }, value: { count: 2 } }); // its two handlers' deliveries
    const { bucketCounts, explicitBounds } = histogram.value as { bucketCounts: Array<string | number>; explicitBounds: number[] };
    expect(explicitBounds).toEqual([0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30]); // the buckets /metrics has
    expect(bucketCounts.reduce((sum: number, n) => sum + Number(n), 0)).toBe(2);
  });

  it('a rejected webhook is a span with the error code, status error', async () => {
    const port = await freePort();
    service = await startService(testConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, PORT: String(port), HOST: '127.0.0.1' }), {
      log: silentLogger,
      db: testDb.db,
      scheduler: false,
    });
    collector.spans.length = 0;
    const forged = checkoutCompleted('forged');
    const answer = await sendDelivery(service.url!, {
      ...forged,
      sign: (now) => ({ ...forged.sign(now), 'stripe-signature': `t=${Math.floor(now / 1000)},v1=00` }),
    });
    expect(answer).toMatchObject({ status: 400 });
    await service.stop();
    service = undefined;
    expect(collector.spans.find((s) => s.name === 'POST /webhooks/payments')).toMatchObject({
      attributes: { 'hookrun.outcome': 'rejected', 'error.type': 'invalid_signature' },
      status: { code: 2 },
    });
  });

  it('inside a serverless function (no loops between requests), a processing pass exports what it traced before it returns', async () => {
    service = await startServerless();
    collector.spans.length = 0;
    const delivery = checkoutCompleted('serverless');
    const answer = await service.app.request('/webhooks/payments', { method: 'POST', headers: delivery.sign(Date.now()), body: delivery.body });
    expect(answer.status).toBe(200);
    const { id } = (await answer.json()) as { id: number };
    expect((await service.onDemand.process(10_000)).claimed).toBe(1);
    // No wait: the function may be frozen from here on, so both spans are at the collector already.
    expect(collector.spans.map((span) => [span.name, span.attributes['hookrun.event.id']])).toEqual(
      expect.arrayContaining([
        ['POST /webhooks/payments', id],
        ['handle payments checkout.session.completed', id],
      ]),
    );
  });

  it("with telemetry on, a serverless pass keeps the function's deadline: a delivery with too little time left is not started", async () => {
    service = await startServerless();
    const delivery = checkoutCompleted('near-deadline');
    const answer = await service.app.request('/webhooks/payments', { method: 'POST', headers: delivery.sign(Date.now()), body: delivery.body });
    const { id } = (await answer.json()) as { id: number };
    // 100 ms left: less than a delivery may start with, so its claim goes back untouched.
    await service.onDemand.process(10_000, performance.now() + 100);
    const [row] = await testDb.db.query<{ status: string; attempts: number }>('SELECT status, attempts FROM hookrun.handler_deliveries WHERE event_id = $1', [
      id,
    ]);
    expect(row).toMatchObject({ status: 'pending', attempts: 0 });
  });
});
