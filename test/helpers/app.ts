import type { Hono } from 'hono';
import { ManualClock } from '../../src/clock.js';
import type { Config } from '../../src/config/config.js';
import type { Database } from '../../src/db/database.js';
import { EventWriter } from '../../src/db/event-writer.js';
import { buildApp } from '../../src/http/build-app.js';
import { silentLogger } from '../../src/log.js';
import { Metrics } from '../../src/metrics.js';
import { testConfig } from './config.js';

/** An in-process app over a test database, with a clock the test controls (starts at real now). */
export interface TestApp {
  app: Hono;
  config: Config;
  clock: ManualClock;
  metrics: Metrics;
}

/** The HTTP app as service.ts builds it (buildApp), without cron and operator routes, minus the listening socket. */
export function createTestApp(db: Database, env: Record<string, string | undefined> = {}): TestApp {
  const config = testConfig(env);
  const clock = new ManualClock(Date.now());
  const metrics = new Metrics();
  const { app } = buildApp({ config, db, clock, log: silentLogger, metrics, writer: new EventWriter(db) });
  return { app, config, clock, metrics };
}

/** Count stored webhook events (optionally of one source). */
export async function countEvents(db: Database, source?: string): Promise<number> {
  const rows = source
    ? await db.query<{ n: number }>('SELECT count(*)::int AS n FROM hookrun.webhook_events WHERE source = $1', [source])
    : await db.query<{ n: number }>('SELECT count(*)::int AS n FROM hookrun.webhook_events');
  return rows[0]!.n;
}
