import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { Hono } from 'hono';
import { systemClock, type Clock } from './clock.js';
import type { Config } from './config/config.js';
import type { Database } from './db/database.js';
import { EventWriter } from './db/event-writer.js';
import { createServiceAlerts } from './alerts/service-alerts.js';
import { createCronService } from './cron/cron-service.js';
import { buildApp } from './http/build-app.js';
import { createWorker } from './inbox/worker.js';
import { expireLeftLeases } from './deliveries/leases-sql.js';
import type { Logger } from './log.js';
import { Metrics } from './metrics.js';
import { createStripeApi } from './payments-api/stripe-client.js';
import { loadHandlers } from './project/load-project.js';
import { applyProjectMigrations } from './project/migrations.js';
import { createRetentionLoop } from './retention/retention-loop.js';
import { createVerifiers } from './webhooks/verifiers.js';
import { startTelemetry, type Telemetry } from './telemetry/start-telemetry.js';
import { explainListenError } from './startup-errors.js';
import { createOnDemandProcessing, type OnDemandProcessing } from './service-drain.js';

/** Switches for the parts of a running hookrun; `hookrun start` turns everything on. */
export interface ServiceOptions {
  log: Logger;
  clock?: Clock;
  /** Serve HTTP (false for `hookrun worker`). */
  http?: boolean;
  scheduler?: boolean;
  worker?: boolean;
  /**
   * Run the worker, retention, the alert monitor and the change capture as
   * loops (default). Off inside a serverless function, which has no life
   * between requests: the caller drives `RunningService.onDemand` instead.
   */
  background?: boolean;
  /** Reuse an open database (tests); otherwise one is opened from config. */
  db?: Database;
}

/** A running hookrun: its address, its parts, and the one way to stop it cleanly. */
export interface RunningService {
  url: string | undefined;
  app: Hono;
  db: Database;
  config: Config;
  /** Process due work now, bounded by a budget: what `hookrun/next` calls after answering and from its drain route. */
  onDemand: OnDemandProcessing;
  /** Stop taking work, finish what runs (bounded by SHUTDOWN_TIMEOUT_MS), close the database; the first call's options hold. */
  stop(options?: StopOptions): Promise<void>;
}

/** How `RunningService.stop` begins. */
export interface StopOptions {
  /** Serve on this long with `/ready` at 503 before the listener closes (SHUTDOWN_READY_GRACE_MS on a signal); default 0. */
  readyGraceMs?: number;
}

/** Slow clients must not hold sockets forever (Slowloris); numbers in ms. */
const HEADERS_TIMEOUT_MS = 10_000;
/** A whole request, body included: the backstop behind a body's own allowance (webhooks/body-deadline.ts), which answers first up to 1 MiB. */
const REQUEST_TIMEOUT_MS = 15_000;
const KEEP_ALIVE_TIMEOUT_MS = 5_000;
/** Node enforces the two time-outs above only on this interval (default 30 s, so a drip of headers held a socket ~30 s). */
const CONNECTIONS_CHECK_INTERVAL_MS = 1_000;
const IDLE_SWEEP_MS = 100;

async function listen(app: Hono, config: Config): Promise<Server> {
  const { serve } = await import('@hono/node-server'); // not loaded inside Next.js (`http: false`), which serves the app itself
  return new Promise((resolve, reject) => {
    const server = serve(
      { fetch: app.fetch, port: config.port, hostname: config.host, serverOptions: { connectionsCheckingInterval: CONNECTIONS_CHECK_INTERVAL_MS } },
      () => resolve(server as Server),
    ) as Server;
    server.once('error', (error) => reject(explainListenError(error, config.port, config.host)));
    server.headersTimeout = HEADERS_TIMEOUT_MS;
    server.requestTimeout = REQUEST_TIMEOUT_MS;
    server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  });
}

/** Answer each request from now on with `Connection: close`, so a keep-alive client (a proxy's pool too) connects afresh and a load balancer can send it elsewhere. */
function endKeepAlive(server: Server): void {
  server.on('request', (_req, res: { shouldKeepAlive: boolean }) => (res.shouldKeepAlive = false));
}

/** The grace before the listener closes: a load balancer sends requests until it sees /ready fail (or its endpoints update), so serve them meanwhile. */
async function serveOnUnready(server: Server, graceMs: number, log: Logger): Promise<void> {
  if (graceMs <= 0) return;
  log.info({ graceMs }, `stopping: /ready answers 503; requests are still served for ${graceMs} ms (SHUTDOWN_READY_GRACE_MS)`);
  endKeepAlive(server);
  await new Promise((resolve) => setTimeout(resolve, graceMs));
}

function closeServer(server: Server, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    // Sockets busy at close() turn idle once their response is out: close them then, not at KEEP_ALIVE_TIMEOUT_MS.
    const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
    const timer = setTimeout(() => {
      clearInterval(sweep);
      server.closeAllConnections();
      resolve();
    }, timeoutMs);
    server.close(() => {
      clearInterval(sweep);
      clearTimeout(timer);
      resolve();
    });
    endKeepAlive(server); // a busy keep-alive client is never idle: its next answer tells it to move on
    server.closeIdleConnections();
  });
}

/** Inside a serverless function, which may be frozen once it answers: what a pass traced is exported before the pass returns. */
function exportingAfterEachPass(processing: OnDemandProcessing, telemetry: Telemetry | undefined): OnDemandProcessing {
  if (!telemetry) return processing;
  return {
    process: (ms, finishBy) => processing.process(ms, finishBy).finally(telemetry.flush),
    join: () => processing.join(),
    drain: (ms, finishBy) => processing.drain(ms, finishBy).finally(telemetry.flush),
  };
}

/**
 * Migrate hookrun's tables and the project's; on an embedded data dir (this
 * process's alone, under its lock) take over at once what a previous run left
 * `running`, instead of after LEASE_SECONDS.
 */
async function prepareDatabase(config: Config, db: Database, log: Logger, ownsDb: boolean): Promise<void> {
  const migrated = await db.migrate();
  if (migrated.movedFromPublic.length > 0)
    log.info({ tables: migrated.movedFromPublic, schema: config.schema }, `moved hookrun's tables from public to schema ${config.schema}`);
  if (ownsDb && db.kind === 'pglite') {
    const left = await expireLeftLeases(db);
    if (left > 0) log.info({ deliveries: left }, 'deliveries a previous run left running are taken over now');
  }
  const ownMigrations = await applyProjectMigrations(db, config.projectDir); // the project's migrations/ folder
  if (ownMigrations.length > 0) log.info({ migrations: ownMigrations }, "applied the project's migrations");
}

/**
 * The rest of `startService` once the database is open: migrate it, build the
 * verifiers (a bad secret stops here), then serve, process and schedule. A
 * failure closes the database when the service owns it (`ownsDb`).
 */
export async function assembleService(config: Config, options: ServiceOptions, db: Database, ownsDb: boolean): Promise<RunningService> {
  const { log } = options;
  const clock = options.clock ?? systemClock;
  try {
    await prepareDatabase(config, db, log, ownsDb);
    const verifiers = createVerifiers(config);
    const metrics = new Metrics({ defaultMetrics: true });
    const telemetry = await startTelemetry(config.telemetry, metrics, log); // OTEL_EXPORTER_OTLP_ENDPOINT; nothing loaded without it
    const alerts = createServiceAlerts(config, log, metrics);
    // The one Stripe API client (STRIPE_SECRET_KEY): the payments handlers, the reconcile job and route share it.
    const stripe = config.stripe && createStripeApi(config.stripe);
    const cron = await createCronService({ config, stripe, db, clock, log, metrics, onRunFailed: alerts.onRunFailed });
    for (const warning of cron.validate()) log.warn(warning); // a broken platform.json throws here
    const handlers = (await loadHandlers(config, { stripe })).registry; // a broken handler file throws here
    const worker =
      options.worker === false
        ? undefined
        : createWorker({
            db,
            config,
            clock,
            log,
            metrics,
            handlers,
            ingest: {
              get queued() {
                return writer.queued;
              },
            },
            onDead: alerts.onDead,
          });
    const writer = new EventWriter(db, () => worker?.wake());
    const retention = worker && createRetentionLoop({ db, days: config.retention, clock, log, metrics });
    const background = options.background !== false;
    // Bulk replays: every instance may advance them. Inside a serverless function only the drain route does, so they load there.
    const replays = background ? (await import('./replay/runner.js')).createReplayRunner({ db, clock, log }) : undefined;
    // Loaded only when configured: the replication client and pg cost ~150 ms of every start-up otherwise.
    const capture =
      (background || undefined) &&
      worker &&
      config.changes &&
      (await import('./changes/capture.js')).createChangeCapture({
        settings: config.changes,
        db,
        log,
        metrics,
        onStored: () => worker.wake(),
        onWalRetained: alerts.onWalRetained,
      });
    await capture?.preflight(); // wal_level, REPLICATION, the publication: a ConfigError stops start-up here
    let stopping: Promise<void> | undefined;
    const { app, closeStreams, senderRejections } = buildApp({
      config,
      db,
      clock,
      log,
      metrics,
      writer,
      cron,
      verifiers,
      changes: capture || undefined,
      stripe,
      handlers: async () => handlers,
      stopping: () => stopping !== undefined,
    });

    const server = options.http === false ? undefined : await listen(app, config);
    if (background) {
      worker?.start();
      retention?.start();
      capture?.start();
      replays?.start();
    }
    alerts.start({ db, clock, overdue: (graceMs, sinceMs) => cron.overdue(graceMs, sinceMs) }, { timer: background });
    if (options.scheduler && background) cron.startScheduler();
    const drainRetention = config.retention.events + config.retention.dedupeKeys + config.retention.cronRuns > 0 ? retention : undefined;
    const advanceReplays = async (deadline: number) => (await import('./replay/runner.js')).advanceReplaysUntil({ db, clock }, deadline);
    const processing = createOnDemandProcessing({ worker, cron, retention: drainRetention, checkAlerts: () => alerts.check(), advanceReplays, log });
    const onDemand = background ? processing : exportingAfterEachPass(processing, telemetry);
    const address = server?.address() as AddressInfo | undefined;
    const url = address ? `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}` : undefined;

    const stop = (stopOptions: StopOptions = {}) =>
      (stopping ??= (async () => {
        if (server) await serveOnUnready(server, stopOptions.readyGraceMs ?? 0, log);
        log.info('stopping: no new requests; finishing what runs');
        closeStreams(); // streams never go idle: end them, their clients resume elsewhere by id
        if (server) await closeServer(server, config.shutdownTimeoutMs);
        await Promise.all([worker?.stop(), cron.stop(), retention?.stop(), capture?.stop(), replays?.stop()]);
        await alerts.stop();
        await senderRejections.flush(); // the last minute's refusal counts
        await telemetry?.shutdown(); // the last spans, and a last reading of the metrics
        if (ownsDb) await db.close();
        log.info('stopped');
      })());
    return { url, app, db, config, onDemand, stop };
  } catch (error) {
    if (ownsDb) await db.close().catch(() => undefined);
    throw error;
  }
}
