import type { Hono } from 'hono';
import { ManualClock } from '../../src/clock.js';
import type { Config } from '../../src/config/config.js';
import { createCronService, type CronService } from '../../src/cron/cron-service.js';
import { resolveJob } from '../../src/cron/job.js';
import type { Database } from '../../src/db/database.js';
import { EventWriter } from '../../src/db/event-writer.js';
import { buildApp, type BuiltApp } from '../../src/http/build-app.js';
import { createStripeApi } from '../../src/payments-api/stripe-client.js';
import { silentLogger } from '../../src/log.js';
import { Metrics } from '../../src/metrics.js';
import { buildSample, signSample } from '../../src/webhooks/samples.js';
import { testConfig } from '../helpers/config.js';

/** The whole HTTP app with the operator's routes mounted, a test clock and two test jobs. */
export interface ToolsApp {
  app: Hono;
  config: Config;
  clock: ManualClock;
  metrics: Metrics;
  cron: CronService;
  /** The receivers' refusal counts; `flush()` writes them now. */
  senderRejections: BuiltApp['senderRejections'];
  /** Every route the app serves, the operator's (loaded on first use) included. */
  routes: BuiltApp['routes'];
}

/** Jobs for the tests: `tick` succeeds, `boom` fails with a message. */
export const TEST_JOBS = new Map([
  ['tick', resolveJob({ description: 'does nothing', run: () => undefined })],
  ['boom', resolveJob({ description: 'always fails', run: () => Promise.reject(new Error('kaboom')) })],
]);

/** The app as service.ts builds it (buildApp), with test jobs and a test clock. */
export async function createToolsApp(
  db: Database,
  env: Record<string, string | undefined> = {},
  clock = new ManualClock(Date.UTC(2026, 5, 1, 12)),
): Promise<ToolsApp> {
  const config: Config = { ...testConfig(env), crons: [{ path: '/cron/tick', schedule: '0 1 * * *' }] };
  const metrics = new Metrics();
  const stripe = config.stripe && createStripeApi(config.stripe); // as service-assembly.ts builds it: once
  const cron = await createCronService({ config, stripe, db, log: silentLogger, metrics, clock, jobs: TEST_JOBS });
  const { app, senderRejections, routes } = buildApp({ config, db, clock, log: silentLogger, metrics, writer: new EventWriter(db), cron, stripe });
  return { app, config, clock, metrics, cron, senderRejections, routes };
}

/** Post a signed sample through the real receiver; returns the stored event id. */
export async function postSample(tools: ToolsApp, source: 'payments' | 'auth' | 'database', type: string): Promise<number> {
  const body = JSON.stringify(buildSample(source, type, undefined, tools.clock.now()));
  const res = await tools.app.request(`/webhooks/${source}`, {
    method: 'POST',
    body,
    headers: signSample(source, body, tools.config, { nowMs: tools.clock.now() }),
  });
  if (res.status !== 200) throw new Error(`sample not accepted: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { id: number }).id;
}
