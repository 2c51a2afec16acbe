import type { Context, Hono } from 'hono';
import { ManualClock } from '../../src/clock.js';
import type { Config } from '../../src/config/config.js';
import type { CronEntry } from '../../src/config/platform-entries.js';
import { createCronService, type CronService } from '../../src/cron/cron-service.js';
import { resolveJob, type EngineJobSpec } from '../../src/cron/job.js';
import type { JobRegistry } from '../../src/cron/registry.js';
import type { Database, Queryable } from '../../src/db/database.js';
import { COLUMNS, type CronRunRow } from '../../src/cron/runs-sql.js';
import { EventWriter } from '../../src/db/event-writer.js';
import { buildApp } from '../../src/http/build-app.js';
import { silentLogger } from '../../src/log.js';
import { Metrics } from '../../src/metrics.js';
import { testConfig } from '../helpers/config.js';
import { createStripeApi } from '../../src/payments-api/stripe-client.js';

/** A promise the test settles by hand (a job that runs until the test says so). */
export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Build a registry from inline job specs. */
export function jobsOf(specs: Record<string, EngineJobSpec>): JobRegistry {
  return new Map(Object.entries(specs).map(([name, spec]) => [name, resolveJob(spec)]));
}

/** Everything a cron test drives: the service, its clock, metrics and an app with /cron mounted. */
export interface CronHarness {
  cron: CronService;
  clock: ManualClock;
  metrics: Metrics;
  config: Config;
  app: Hono;
}

export interface HarnessOptions {
  jobs?: JobRegistry;
  crons?: CronEntry[];
  env?: Record<string, string | undefined>;
  clock?: ManualClock;
  remoteAddress?: (c: Context) => string | undefined;
  lateToleranceMs?: number;
  onRunFailed?: (run: { job: string; error: string; runId: number }) => void;
}

/** The cron service over `db`, mounted in the real HTTP app the way service.ts will mount it. */
export async function createHarness(db: Database, options: HarnessOptions = {}): Promise<CronHarness> {
  const config: Config = { ...testConfig(options.env), crons: options.crons ?? [] };
  const clock = options.clock ?? new ManualClock(Date.UTC(2026, 0, 1, 0, 0, 0));
  const metrics = new Metrics();
  const stripe = config.stripe && createStripeApi(config.stripe); // as service-assembly.ts builds it: once
  const cron = await createCronService({
    config,
    stripe,
    db,
    clock,
    log: silentLogger,
    metrics,
    jobs: options.jobs,
    remoteAddress: options.remoteAddress,
    ticker: { lateToleranceMs: options.lateToleranceMs },
    onRunFailed: options.onRunFailed,
  });
  const { app } = buildApp({ config, db, clock, log: silentLogger, metrics, writer: new EventWriter(db), cron, stripe });
  return { cron, clock, metrics, config, app };
}

/** All cron_runs rows, oldest first. */
export async function allRuns(db: Queryable): Promise<CronRunRow[]> {
  return db.query<CronRunRow>(`SELECT ${COLUMNS} FROM hookrun.cron_runs ORDER BY id`);
}

/** A Database whose queries fail while `down` is set, or when `failOn` matches the SQL. */
export function faultyDatabase(db: Database, options: { failOn?: RegExp } = {}): Database & { down: boolean } {
  const state = { down: false };
  const guard = (text: string) => {
    if (state.down) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
    if (options.failOn?.test(text)) throw new Error(`injected failure on: ${text.slice(0, 40)}`);
  };
  const wrap = (q: Queryable): Queryable => ({
    query: async <T>(text: string, params?: unknown[]) => {
      guard(text);
      return q.query<T>(text, params);
    },
  });
  const wrapped: Database & { down: boolean } = {
    kind: db.kind,
    tuning: db.tuning,
    ...wrap(db),
    transaction: async (fn) => {
      if (state.down) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
      return db.transaction((tx) => fn(wrap(tx)));
    },
    listen: db.listen.bind(db),
    migrate: db.migrate.bind(db),
    close: db.close.bind(db),
    get down() {
      return state.down;
    },
    set down(value: boolean) {
      state.down = value;
    },
  };
  return wrapped;
}
