import type { Hono } from 'hono';
import type { ChangeCapture } from '../changes/capture.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/config.js';
import type { CronService } from '../cron/cron-service.js';
import type { Database } from '../db/database.js';
import { countEventsByStatus } from '../db/event-counts.js';
import { retainedTableBytes } from '../db/retention.js';
import { prune } from '../retention/prune.js';
import type { EventWriter } from '../db/event-writer.js';
import { reconcilePayments } from '../payments-api/reconcile.js';
import { SENDER_RECONCILES } from '../reconcile/senders.js';
import type { StripeApi } from '../payments-api/stripe-client.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import { createAdminApi } from './admin.js';
import { createDashboard } from './console/console.js';
import type { EventStream } from './event-stream.js';
import type { HandlerCatalogSource } from './handler-routes.js';
import type { CredentialThrottle } from './credential-throttle.js';
import { createMetricsRoute } from './metrics.js';
import { createOpenApiRoute } from './openapi.js';
import { customProvider } from '../webhooks/providers/custom.js';

/** What the operator's routes need; all of it exists once service.ts has built the app's parts. */
export interface OperatorRoutesDeps {
  config: Config;
  db: Database;
  clock: Clock;
  log: Logger;
  metrics: Metrics;
  cron: Pick<CronService, 'listJobs' | 'listRuns' | 'runJob' | 'pause' | 'resume' | 'backfill'>;
  /** The receivers' insert-or-ignore, which `POST /api/payments/reconcile` feeds; its queue, which payload searches let go first. */
  writer: Pick<EventWriter, 'write' | 'queued'>;
  /** `GET /api/events/stream`; service.ts owns it so a stop can end open streams. */
  eventStream?: EventStream;
  /** The WAL capture, whose state (with its last error) `GET /api/changes` shows. */
  changes?: Pick<ChangeCapture, 'status'>;
  /** The service's Stripe API client: with it `POST /api/payments/reconcile` is served. */
  stripe?: StripeApi;
  /** The handlers the worker runs: `/api/handlers` and the dashboard list, pause and resume them. */
  handlers?: HandlerCatalogSource;
  /** The app's credential throttle, which the console login shares with the bearer routes. */
  credentials?: CredentialThrottle;
}

/**
 * The operator's and developer's HTTP tools as `mounts` for `createApp`:
 * `GET /metrics`, `GET /openapi.json`, the admin API under `/api` and the
 * dashboard under `/admin`.
 */
export function createOperatorMounts(deps: OperatorRoutesDeps): Array<{ prefix: string; app: Hono }> {
  const { stripe } = deps;
  const reconcile = stripe && ((since: Date) => reconcilePayments({ api: stripe, writer: deps.writer, since }));
  const runPrune = (dryRun: boolean) =>
    prune(deps.db, deps.config.retention, deps.clock.now(), { dryRun, onDeleted: (table, rows) => deps.metrics.retentionDeleted.inc({ table }, rows) });
  const adminDeps = {
    config: deps.config,
    db: deps.db,
    ingest: deps.writer,
    clock: deps.clock,
    cron: deps.cron,
    log: deps.log,
    reconcilePayments: reconcile,
    reconcileSender: (sender: keyof typeof SENDER_RECONCILES, since: Date) =>
      SENDER_RECONCILES[sender].run({ config: deps.config, db: deps.db, writer: deps.writer, since }),
    prune: runPrune,
    eventStream: deps.eventStream,
    changes: deps.changes,
    handlers: deps.handlers,
    settings: deps.config,
    credentials: deps.credentials,
  };
  return [
    {
      prefix: '/',
      app: createMetricsRoute({
        metrics: deps.metrics,
        token: deps.config.metricsToken,
        log: deps.log,
        countEventsByStatus: () => countEventsByStatus(deps.db),
        tableBytes: () => retainedTableBytes(deps.db),
        sampleTimeoutMs: deps.config.dbTimeoutMs,
        now: () => deps.clock.now(),
      }),
    },
    { prefix: '/', app: createOpenApiRoute(undefined, deps.config.customWebhooks.map(customProvider)) },
    { prefix: '/api', app: createAdminApi(adminDeps) },
    { prefix: '/admin', app: createDashboard(adminDeps) },
  ];
}
