import type { Hono } from 'hono';
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
import { createEventStream, type EventStream } from './event-stream.js';
import { knownSources } from './known-sources.js';
import type { HandlerCatalogSource } from './handler-routes.js';
import { createOperatorMounts } from './operator-routes.js';
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
  eventStream: EventStream;
  /** The receivers' refusal counts: flush at shutdown so the last minute is written. */
  senderRejections: SenderRejectionCounter;
}

/**
 * The one place hookrun's HTTP surface is wired: receivers, health and
 * readiness always; cron routes and the operator's routes when a cron service
 * is given. `service.ts`, the tests and the CLI all build the app here, so
 * none of them can drift from what runs in production.
 */
export function buildApp(parts: AppParts): BuiltApp {
  const { config, db, clock, log, metrics, writer, cron } = parts;
  const eventStream = createEventStream({ db, log, sources: knownSources(config) });
  const senderRejections = new SenderRejectionCounter(db, () => clock.now(), log);
  const credentials = new CredentialThrottle(); // one for the bearer routes and the console login: a guess anywhere counts everywhere
  const mounts = cron
    ? [
        { prefix: '/cron', app: cron.routes },
        ...createOperatorMounts({
          config,
          db,
          clock,
          log,
          metrics,
          cron,
          writer,
          eventStream,
          changes: parts.changes,
          stripe: parts.stripe,
          handlers: parts.handlers,
          credentials,
        }),
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
  return { app, eventStream, senderRejections };
}
