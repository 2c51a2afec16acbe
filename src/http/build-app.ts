import { Hono } from 'hono';
import { pathInsideMount } from './mount-bindings.js';
import type { RouterRoute } from 'hono/types';
import type { ChangeCapture } from '../changes/capture.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/config.js';
import type { Source } from '../webhooks/providers/index.js';
import type { CronService } from '../cron/cron-service.js';
import type { Database } from '../db/database.js';
import type { EventWriter } from '../db/event-writer.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { StripeApi } from '../payments-api/stripe-client.js';
import { createVerifiers, type SourceVerifier } from '../webhooks/verifiers.js';
import { createApp } from './app.js';
import { CredentialThrottle } from './credential-throttle.js';
import type { EventStream } from './event-stream.js';
import type { HandlerCatalogSource } from './handler-routes.js';
import type { OperatorRoutesDeps } from './operator-routes.js';
import { createErrorHandler, routeNotFound } from './errors.js';
import { SenderRejectionCounter } from '../issues/rejection-counter.js';

/** The parts a running hookrun (or a test, or the CLI) already has; the app is built from them. */
export interface AppParts {
  config: Config;
  db: Database;
  clock: Clock;
  log: Logger;
  metrics: Metrics;
  /** The receivers' group-commit writer (also what `POST /api/payments/reconcile` feeds). */
  writer: EventWriter;
  /** With it: `/cron/<job>` and the operator's routes (`/metrics`, `/openapi.json`, `/docs`, `/api`, `/admin`). */
  cron?: CronService;
  /** The change capture (CHANGES_DATABASE_URL), whose state `/ready` shows. */
  changes?: Pick<ChangeCapture, 'status'>;
  /** Default: built from `config` (a bad secret throws ConfigError here). */
  verifiers?: Record<Source, SourceVerifier>;
  /** The Stripe API client the service built (STRIPE_SECRET_KEY), for `POST /api/payments/reconcile`. */
  stripe?: StripeApi;
  /** The handlers the worker runs (or a loader of them), which the operator's routes list, pause and resume. */
  handlers?: HandlerCatalogSource;
  /** True once shutdown has begun (`/ready` then answers 503). */
  stopping?: () => boolean;
}

/** The app and the parts of it its owner must stop. */
export interface BuiltApp {
  app: Hono;
  /** End open `GET /api/events/stream` connections at shutdown (they never go idle). */
  closeStreams(): void;
  /** The receivers' refusal counts: flush at shutdown so the last minute is written. */
  senderRejections: SenderRejectionCounter;
  /** Every route the app serves, the operator's included (loaded now if no request has loaded them yet): for what lists the whole surface. */
  routes(): Promise<RouterRoute[]>;
}

/**
 * The operator's routes (`/metrics`, `/openapi.json`, `/docs`, `/api`,
 * `/admin`), built on the first request that reaches them: a webhook never
 * does, and they are ~90 modules (the console, the admin API, the OpenAPI
 * document) a serverless cold start would otherwise load before its first
 * answer. They answer as if mounted directly: the app's middleware (credential
 * guard, body limit, rejection count) runs around them, and their errors and
 * 404s are the app's own. A load that fails is not kept: the next request tries again.
 */
function operatorRoutesOnFirstUse(deps: Omit<OperatorRoutesDeps, 'eventStream'>): { app: Hono; load(): Promise<Hono>; closeStreams(): void } {
  let loading: Promise<Hono> | undefined;
  let eventStream: EventStream | undefined; // `GET /api/events/stream` and the console's live tabs: created with the routes that serve them
  const load = () =>
    (loading ??= Promise.all([import('./operator-routes.js'), import('./event-stream.js'), import('./known-sources.js')]).then(
      ([{ createOperatorMounts }, { createEventStream }, { knownSources }]) => {
        eventStream = createEventStream({ db: deps.db, log: deps.log, sources: knownSources(deps.config) });
        const routes = new Hono({ getPath: pathInsideMount });
        routes.onError(createErrorHandler(deps.log));
        routes.notFound(routeNotFound);
        for (const mount of createOperatorMounts({ ...deps, eventStream })) routes.route(mount.prefix, mount.app);
        return routes;
      },
      (error: unknown) => {
        loading = undefined;
        throw error;
      },
    ));
  return {
    app: new Hono({ getPath: pathInsideMount }).all('*', async (c) => (await load()).fetch(c.req.raw, c.env)),
    load,
    closeStreams: () => eventStream?.close(),
  };
}

/**
 * The one place hookrun's HTTP surface is wired: receivers, health and
 * readiness always; cron routes and the operator's routes when a cron service
 * is given. `service.ts`, the tests and the CLI all build the app here, so
 * none of them can drift from what runs in production.
 */
export function buildApp(parts: AppParts): BuiltApp {
  const { config, db, clock, log, metrics, writer, cron } = parts;
  const senderRejections = new SenderRejectionCounter(db, () => clock.now(), log);
  const credentials = new CredentialThrottle(); // one for the bearer routes and the console login: a guess anywhere counts everywhere
  const operatorRoutes =
    cron &&
    operatorRoutesOnFirstUse({
      config,
      db,
      clock,
      log,
      metrics,
      cron,
      writer,
      changes: parts.changes,
      stripe: parts.stripe,
      handlers: parts.handlers,
      credentials,
    });
  const mounts = operatorRoutes
    ? [
        { prefix: '/cron', app: cron.routes },
        { prefix: '/', app: operatorRoutes.app },
      ]
    : [];
  const app = createApp({
    config,
    db,
    writer,
    verifiers: parts.verifiers ?? createVerifiers(config),
    clock,
    log,
    metrics,
    mounts,
    changes: parts.changes,
    senderRejections,
    credentials,
    stopping: parts.stopping,
  });
  const routes = async () => [...app.routes, ...(operatorRoutes ? (await operatorRoutes.load()).routes : [])];
  return { app, closeStreams: () => operatorRoutes?.closeStreams(), senderRejections, routes };
}
