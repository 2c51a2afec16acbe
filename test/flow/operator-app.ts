import type { Hono } from 'hono';
import { ManualClock } from '../../src/clock.js';
import { createCronService } from '../../src/cron/cron-service.js';
import type { Database } from '../../src/db/database.js';
import { EventWriter } from '../../src/db/event-writer.js';
import { parseFlowOptions } from '../../src/flow/options.js';
import { buildApp } from '../../src/http/build-app.js';
import { HandlerRegistry } from '../../src/deliveries/registry.js';
import type { Worker } from '../../src/inbox/worker.js';
import { silentLogger } from '../../src/log.js';
import { Metrics } from '../../src/metrics.js';
import { SECRETS, testConfig } from '../helpers/config.js';
import { testWorker } from '../inbox/fixtures.js';

/** The app with the operator's routes and a worker, over one database, one registry and one clock: what a running hookrun has. */
export interface OperatorApp {
  app: Hono;
  worker: Worker;
  clock: ManualClock;
  /** A request to the admin API with the ADMIN_TOKEN. */
  api(method: 'GET' | 'POST', path: string): Promise<Response>;
}

/** Build it; `env` reaches the worker's config (MAX_ATTEMPTS, …). */
export async function operatorApp(db: Database, handlers: HandlerRegistry, env: Record<string, string> = {}): Promise<OperatorApp> {
  const clock = new ManualClock(Date.now());
  const config = testConfig(env);
  const metrics = new Metrics();
  const cron = await createCronService({ config, db, log: silentLogger, metrics, clock, jobs: new Map() });
  const { app } = buildApp({ config, db, clock, log: silentLogger, metrics, writer: new EventWriter(db), cron, handlers: async () => handlers });
  const { worker } = testWorker(db, { handlers, env, clock, options: { flowHorizonMs: 0 } });
  const api = async (method: 'GET' | 'POST', path: string) =>
    app.request(`/api${path}`, {
      method,
      headers: { authorization: `Bearer ${SECRETS.admin}`, 'content-type': 'application/json' },
      body: method === 'POST' ? '{}' : undefined,
    });
  return { app, worker, clock, api };
}

/** What a test handler does with its event: record it, and throw when `fail` says so. */
export interface Recorder {
  seen: Array<{ handler: string; eventId: number }>;
  fail: (handler: string, eventId: number) => boolean;
  /** While set, every handler waits on it (holds deliveries running). */
  gate?: Promise<void>;
}

/** A registry of test handlers on `test:<name>` events, each with its flow options, recording each call in `recorder`. */
export function handlersWith(options: Record<string, Record<string, unknown>>, recorder: Recorder): HandlerRegistry {
  const registry = new HandlerRegistry();
  for (const [name, flow] of Object.entries(options)) {
    registry.on(
      'test',
      name,
      async ({ event }) => {
        recorder.seen.push({ handler: name, eventId: event.id });
        if (recorder.gate) await recorder.gate;
        if (recorder.fail(name, event.id)) throw new Error(`boom ${event.id}`);
      },
      { name, isolated: true, flow: parseFlowOptions(flow) },
    );
  }
  return registry;
}

/** A new recorder: nothing seen, nothing fails. */
export const recorder = (): Recorder => ({ seen: [], fail: () => false });
