import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.js';
import { acknowledged, checkoutCompleted, sendDelivery } from '../helpers/signed-deliveries.js';
import { seedDataDir, spawnHookrun } from '../helpers/spawn-hookrun.js';

const RECORDER = resolve(import.meta.dirname, '..', 'helpers', 'module-recorder.mjs');

/** Start `hookrun start` with the module recorder, receive one signed webhook, stop it; the @opentelemetry modules it loaded. */
async function openTelemetryModules(dir: string, env: Record<string, string>): Promise<string[]> {
  const out = join(dir, `modules-${Object.keys(env).length}.json`);
  const server = await spawnHookrun({
    dataDir: join(dir, 'data'),
    env: { SCHEDULER: 'off', NODE_OPTIONS: `--import=${RECORDER}`, MODULE_RECORDER_OUT: out, ...env },
  });
  try {
    expect(acknowledged(await sendDelivery(server.url, checkoutCompleted(`lazy${Object.keys(env).length}`)))).toBe(true);
  } finally {
    expect((await server.stop(10_000)).code, server.output()).toBe(0);
  }
  const modules = JSON.parse(readFileSync(out, 'utf8')) as string[];
  expect(modules.some((m) => m.includes('/node_modules/hono/'))).toBe(true); // the recorder sees hookrun's own imports
  return [...new Set(modules.filter((m) => m.includes('/node_modules/@opentelemetry/')).map((m) => /@opentelemetry\/([^/]+)/.exec(m)![1]!))].sort();
}

describe('OpenTelemetry costs nothing when OTEL_EXPORTER_OTLP_ENDPOINT is unset', () => {
  let dir: string;
  let collector: OtlpReceiver;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'hookrun-lazy-otel-'));
    // Both servers open the migrated template: what they load is the subject, not a first boot.
    await seedDataDir(join(dir, 'data'));
    collector = await startOtlpReceiver();
  });
  afterAll(async () => {
    await collector.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('unset: no module of the OpenTelemetry SDK is loaded (only the no-op API, which prom-client itself requires); set: the SDK is', async () => {
    expect(await openTelemetryModules(dir, {})).toEqual(['api']);
    const on = await openTelemetryModules(dir, { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url });
    expect(on).toEqual(
      expect.arrayContaining(['api', 'core', 'exporter-trace-otlp-http', 'exporter-metrics-otlp-http', 'resources', 'sdk-metrics', 'sdk-trace-node']),
    );
    expect(collector.spans.some((span) => span.name === 'POST /webhooks/payments')).toBe(true);
  }, 90_000); // two servers, one after the other, each started, sent to and drained
});
