import type { ChangeCapture } from '../changes/capture.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/config.js';
import type { CronService } from '../cron/cron-service.js';
import type { Database } from '../db/database.js';
import type { IngestQueue } from '../db/ingest-first.js';
import type { Logger } from '../log.js';
import type { ReconcileSummary } from '../payments-api/reconcile.js';
import type { PruneReport } from '../retention/prune.js';
import type { EventStream } from './event-stream.js';
import type { HandlerCatalogSource } from './handler-routes.js';
import type { CredentialThrottle } from './credential-throttle.js';
import type { ReconcileSenderRun } from './reconcile-routes.js';
import type { SenderConfig } from './issue-routes.js';

/** What the admin API reads and drives; the dashboard and the CLI use the same modules. */
export interface AdminApiDeps {
  /** No `operators` → every route answers 503 `not_configured`; the senders' secrets (set or not) feed `/api/senders`; `publicUrl` is an origin the console's forms may be posted from. */
  config: Pick<Config, 'operators'> & Partial<Pick<Config, 'maxAttempts' | 'publicUrl'>> & Partial<SenderConfig>;
  db: Database;
  /** The receivers' queue: on the embedded database a payload search's slices let its inserts go first (without it they do not wait). */
  ingest?: IngestQueue;
  clock: Clock;
  cron: Pick<CronService, 'listJobs' | 'listRuns' | 'runJob' | 'pause' | 'resume' | 'backfill'>;
  log: Logger;
  /** `GET /api/events/stream` (server-sent events); without it the route is 404. */
  eventStream?: EventStream;
  /** Set when STRIPE_SECRET_KEY is: feed the events Stripe lists since a date into the inbox. */
  reconcilePayments?: (since: Date) => Promise<ReconcileSummary>;
  /** `POST /api/reconcile/{sender}`: GitHub, Paddle, WorkOS, Clerk gap repair with this server's settings. */
  reconcileSender?: ReconcileSenderRun;
  /** The WAL capture (CHANGES_DATABASE_URL): `GET /api/changes` shows its state with the last error's message; without it the route is 404. */
  changes?: Pick<ChangeCapture, 'status'>;
  /** One retention pass now (`hookrun prune` while the server holds the embedded database); without it the route is 404. */
  prune?: (dryRun: boolean) => Promise<PruneReport>;
  /** The handlers this hookrun runs, for `/api/handlers` and the dashboard's handlers (without it no name is known). */
  handlers?: HandlerCatalogSource;
  /** Wrong ADMIN_TOKENs counted and blocked, shared with the app's bearer routes; without it the console login has its own. */
  credentials?: CredentialThrottle;
}
