import type { Hono } from 'hono';
import { ManualClock, systemClock } from '../../src/clock.js';
import type { Config } from '../../src/config/config.js';
import { createCronService, type CronService } from '../../src/cron/cron-service.js';
import type { Database } from '../../src/db/database.js';
import { EventWriter } from '../../src/db/event-writer.js';
import { parseFlowOptions } from '../../src/flow/options.js';
import { buildApp, type BuiltApp } from '../../src/http/build-app.js';
import { HandlerRegistry } from '../../src/deliveries/registry.js';
import { silentLogger } from '../../src/log.js';
import { Metrics } from '../../src/metrics.js';
import { buildSample, signSample } from '../../src/webhooks/samples.js';
import { testConfig } from '../helpers/config.js';
import { TEST_JOBS } from '../tools/tools-app.js';

/** The console's test app: the whole HTTP surface with a flow-controlled handler (`sync-crm`) and a job scheduled in Berlin time. */
export interface ConsoleApp {
  app: Hono;
  config: Config;
  clock: ManualClock;
  cron: CronService;
  /** Every route the app serves, the operator's (loaded on first use) included. */
  routes: BuiltApp['routes'];
}

/** The handler the console tests pause, resume and read failures of. */
export const HANDLER = 'sync-crm';

/** Build it over `db`, at the real time (the live stream and the chart read the clock); `env` adds settings. */
export async function consoleApp(db: Database, env: Record<string, string> = {}): Promise<ConsoleApp> {
  const clock = new ManualClock(systemClock.now());
  const config: Config = { ...testConfig(env), crons: [{ path: '/cron/tick', schedule: '0 9 * * *', timezone: 'Europe/Berlin' }] };
  const metrics = new Metrics();
  const cron = await createCronService({ config, db, log: silentLogger, metrics, clock, jobs: TEST_JOBS });
  const handlers = new HandlerRegistry().on('auth', 'user.created', async () => undefined, {
    name: HANDLER,
    isolated: true,
    flow: parseFlowOptions({ concurrency: { limit: 2 } }),
  });
  const { app, routes } = buildApp({ config, db, clock, log: silentLogger, metrics, writer: new EventWriter(db), cron, handlers: async () => handlers });
  return { app, config, clock, cron, routes };
}

/** Post a signed `auth` sample to `base` (a served app) as the sender would; the stored id. */
export async function postSigned(base: string, console_: ConsoleApp, type = 'user.created'): Promise<number> {
  console_.clock.set(systemClock.now());
  const body = JSON.stringify(buildSample('auth', type, undefined, console_.clock.now()));
  const res = await fetch(`${base}/webhooks/auth`, {
    method: 'POST',
    body,
    headers: signSample('auth', body, console_.config, { nowMs: console_.clock.now() }),
  });
  if (res.status !== 200) throw new Error(`sample not accepted: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { id: number }).id;
}

/**
 * A few thousand events in one statement, spread over the last six days
 * (some in the last hour) in every status, plus failed attempts and dead
 * deliveries of the handler whose errors carry `hostile`.
 */
export async function seedInbox(db: Database, nowMs: number, count: number, hostile: readonly string[]): Promise<void> {
  await db.query(
    `INSERT INTO hookrun.webhook_events (source, key, type, payload, status, attempts, received_at, last_error)
     SELECT 'auth', 'seed_' || g, (ARRAY['user.created','user.updated','organization.created'])[1 + g % 3], jsonb_build_object('n', g),
       CASE WHEN g % 20 < 12 THEN 'processed' WHEN g % 20 < 14 THEN 'ignored' WHEN g % 20 < 17 THEN 'pending' WHEN g % 20 < 19 THEN 'failed' ELSE 'dead' END,
       g % 4, $1::timestamptz - ((g * 37) % (6 * 24 * 60)) * interval '1 minute' - (g % 60) * interval '1 second', NULL
     FROM generate_series(1, $2::int) g`,
    [new Date(nowMs), count],
  );
  const [first] = await db.query<{ id: number }>(`SELECT min(id)::int AS id FROM hookrun.webhook_events WHERE status = 'dead'`);
  for (const [i, error] of hostile.entries()) {
    const eventId = Number(first!.id) + i * 20;
    await db.query(
      `INSERT INTO hookrun.event_attempts (event_id, attempt, started_at, duration_ms, outcome, error, handler) VALUES ($1, $2, $3::timestamptz, 12, $4, $5, $6)`,
      [eventId, 1, new Date(nowMs - (i + 1) * 60_000), i === 0 ? 'dead' : 'failed', error, HANDLER],
    );
    await db.query(
      `INSERT INTO hookrun.handler_deliveries (handler, event_id, status, attempts, last_error, finished_at) VALUES ($1, $2, 'dead', 3, $3, $4::timestamptz)`,
      [HANDLER, eventId, error, new Date(nowMs - i * 60_000)],
    );
  }
}

/** A finished run of `tick` whose error and output hold `hostile` (a job's logs are outside text too). */
export async function seedHostileRun(db: Database, nowMs: number, hostile: readonly string[]): Promise<void> {
  await db.query(
    `INSERT INTO hookrun.cron_runs (job, trigger, scheduled_for, started_at, finished_at, status, error, duration_ms, attempt, instance, output)
     VALUES ('tick', 'schedule', $1::timestamptz, $1::timestamptz, $1::timestamptz, 'failed', $2, 42, 1, 'host:1', $3)`,
    [new Date(nowMs - 3_600_000), hostile[1], hostile.join('\n')],
  );
}
