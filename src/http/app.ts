import { Hono, type Context } from 'hono';
import { pathInsideMount } from './mount-bindings.js';
import type { CaptureStatus, ChangeCapture } from '../changes/capture.js';
import type { Clock } from '../clock.js';
import { type Config } from '../config/config.js';
import { SOURCES, type Source } from '../webhooks/providers/index.js';
import type { Database } from '../db/database.js';
import type { EventWriter } from '../db/event-writer.js';
import { probeInboxInsert } from '../db/inbox-probe.js';
import { withDeadline } from '../deadline.js';
import { AppError } from '../errors.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import { RejectionLog } from '../rejection-log.js';
import type { SenderRejectionSink } from '../issues/rejection-counter.js';
import { BodyBudget } from '../webhooks/body-budget.js';
import { createReceiver } from '../webhooks/receive.js';
import { createCustomVerifiers, type SourceVerifier } from '../webhooks/verifiers.js';
import { createErrorHandler, routeNotFound } from './errors.js';
import { createAuthFailureGuard } from './auth-failures.js';
import { CredentialThrottle } from './credential-throttle.js';
import { socketAddress } from '../cron/routes.js';
import { countRejections, limitRouteBodies } from './request-limits.js';

/** Everything the HTTP layer serves from; built once by `service.ts` (or a test). */
export interface AppDeps {
  config: Config;
  db: Database;
  writer: EventWriter;
  verifiers: Record<Source, SourceVerifier>;
  clock: Clock;
  log: Logger;
  metrics: Metrics;
  /** The change capture, shown (not judged) by `/ready`: a standby or reconnecting capture still stores webhooks. */
  changes?: Pick<ChangeCapture, 'status'>;
  /** Sub-apps of other capabilities (cron routes, admin API, …), mounted at their prefix. */
  mounts?: Array<{ prefix: string; app: Hono }>;
  /** The caller's IP, which failed credentials are counted by; default the socket's. */
  clientAddress?: (c: Context) => string | undefined;
  /** Where the receivers' refusals are counted per minute (the Senders page, the sender issues). */
  senderRejections?: SenderRejectionSink;
  /** Wrong credentials counted and blocked; buildApp shares it with the console login. Default: the app's own. */
  credentials?: CredentialThrottle;
  /** True once shutdown has begun: `/ready` answers 503 so load balancers move away while requests are still served. */
  stopping?: () => boolean;
}

/** The capture's state in `/ready`, snake_case like the rest of the API. */
function readyChanges(status: CaptureStatus) {
  return {
    state: status.state,
    slot: status.slot,
    publication: status.publication,
    lag_bytes: status.lagBytes,
    lag_seconds: status.lagSeconds,
    retained_wal_bytes: status.retainedWalBytes,
    changes_per_second: status.changesPerSecond,
    ...(status.lastErrorCode ? { last_error_code: status.lastErrorCode } : {}), // the message is in the log and GET /api/changes
  };
}

/**
 * The HTTP surface: health, readiness, the three webhook receivers and
 * whatever sub-apps are mounted. Errors of every route go through one
 * handler that speaks the JSON error contract.
 */
export function createApp(deps: AppDeps): Hono {
  const app = new Hono({ getPath: pathInsideMount });
  app.onError(createErrorHandler(deps.log));
  app.notFound(routeNotFound);
  const { maxBodyBytes, maxInflightBodyBytes, maxInflightBodyBytesPerAddress } = deps.config;
  // One budget for every body read: bytes counted as they arrive, a share per client address.
  const bodyBudget = new BodyBudget(maxInflightBodyBytes, maxInflightBodyBytesPerAddress, maxBodyBytes);
  const rejections = new RejectionLog(deps.log, deps.metrics, () => deps.clock.now());

  app.get('/health', (c) => c.json({ status: 'ok' }));
  // Ready means an event would be stored now. The probe writes nothing, and
  // concurrent calls share the one in flight (a flood of /ready is one probe).
  let probing: Promise<void> | undefined;
  const probe = () => (probing ??= probeInboxInsert(deps.db, deps.config.dbTimeoutMs).finally(() => (probing = undefined)));
  app.get('/ready', async (c) => {
    if (deps.stopping?.()) {
      throw new AppError(
        'unavailable',
        'hookrun is shutting down: requests are still served for SHUTDOWN_READY_GRACE_MS, then the listener closes. Send new requests to another instance.',
      );
    }
    try {
      await withDeadline(probe(), deps.config.dbTimeoutMs, () => new Error('timeout'));
      return c.json({ status: 'ready', database: deps.db.kind, ...(deps.changes ? { changes: readyChanges(deps.changes.status()) } : {}) });
    } catch {
      throw new AppError(
        'unavailable',
        `An event would not be stored within ${deps.config.dbTimeoutMs} ms (DB_TIMEOUT_MS): the database does not answer, or the inbox is locked. hookrun is not ready.`,
      );
    }
  });

  // Counted as answered, so a request the credential guard refuses is counted too; receivers count their own.
  app.use('*', countRejections(rejections));
  const guardDeps = {
    log: deps.log,
    now: () => deps.clock.now(),
    clientAddress: deps.clientAddress ?? socketAddress,
    throttle: deps.credentials ?? new CredentialThrottle(),
  };
  const bearerGuard = createAuthFailureGuard({ ...guardDeps, refuseBeforeCheck: true });
  const { operators, cronSecret, metricsToken } = deps.config;
  for (const [path, secret] of [
    ['/api/*', operators.length > 0 ? 'named tokens' : undefined],
    ['/cron/*', cronSecret],
    ['/metrics', metricsToken],
  ] as const) {
    if (secret !== undefined) app.use(path, bearerGuard); // without its secret a route has no credential to guess
  }
  app.use('/webhooks/*', createAuthFailureGuard({ ...guardDeps, refuseBeforeCheck: false }));

  const receiveDeps = {
    writer: deps.writer,
    clock: deps.clock,
    log: deps.log,
    metrics: deps.metrics,
    toleranceSeconds: deps.config.toleranceSeconds,
    maxBodyBytes,
    bodyBudget,
    rejections,
    senderRejections: deps.senderRejections,
    dbTimeoutMs: deps.config.dbTimeoutMs,
  };
  const receivers = [...SOURCES.map((source) => ({ route: source as string, verifier: deps.verifiers[source] })), ...createCustomVerifiers(deps.config)];
  for (const { route, verifier } of receivers) {
    app.post(`/webhooks/${route}`, createReceiver(route, verifier, receiveDeps));
    app.all(`/webhooks/${route}`, () => {
      throw new AppError('method_not_allowed', `Use POST for /webhooks/${route}.`);
    });
  }

  // Registered after the receivers and health (which answer without calling next): it wraps every other route.
  app.use('*', limitRouteBodies(bodyBudget));
  for (const mount of deps.mounts ?? []) app.route(mount.prefix, mount.app);
  return app;
}
