import { OBSERVABILITY_VARIABLES } from './variables-observability.js';
import { ADMIN_ACCESS_VARIABLES } from './variables-admin.js';
import { SENDER_API_VARIABLES } from './variables-senders.js';

/**
 * One environment variable hookrun reads: what `docs/configuration.md` says
 * of it (the page is generated from this list by `npm run docs:config`, and a
 * test fails when a variable config reads is missing here).
 */
export interface EnvVariable {
  name: string;
  /** The default as an operator reads it (`3002`, `unset → embedded PGlite`). */
  default: string;
  /** What it does, in Markdown. */
  description: string;
  /** The part of hookrun that reads it. */
  feature: string;
}

/** The variables beyond the senders' secrets (those come from the provider list), in the order the page lists them. */
export const ENV_VARIABLES: readonly EnvVariable[] = [
  { name: 'PORT', default: '`3002`', feature: 'server', description: 'HTTP port' },
  { name: 'HOST', default: 'all interfaces', feature: 'server', description: 'address to bind' },
  {
    name: 'DATABASE_URL',
    default: 'unset → embedded PGlite',
    feature: 'database',
    description: "`postgres://…`: share one PostgreSQL between many instances; it may be your product's own database",
  },
  {
    name: 'DATABASE_POOLER',
    default: '`none`',
    feature: 'database',
    description:
      "`transaction` when DATABASE_URL goes through a pooler in transaction mode (PgBouncer's `pool_mode=transaction`, Supabase's port 6543, Neon's `-pooler` host): no settings in the connection's start-up packet, and LISTEN only over DATABASE_DIRECT_URL (without it, instances find new events by a 1 s poll). `session` for a pooler in session mode; `none` for a direct connection",
  },
  {
    name: 'DATABASE_DIRECT_URL',
    default: 'unset',
    feature: 'database',
    description: "the database DATABASE_URL reaches, without the pooler (as Prisma's `directUrl`): migrations and LISTEN use it",
  },
  {
    name: 'HOOKRUN_SCHEMA',
    default: '`hookrun`',
    feature: 'database',
    description: "the PostgreSQL schema of hookrun's tables (lower-case letters, digits, `_`; not `public`)",
  },
  {
    name: 'DATABASE_PREPARED_STATEMENTS',
    default: '`on` (`off` with `DATABASE_POOLER=transaction`)',
    feature: 'database',
    description:
      "PostgreSQL: prepares the hot statements whose one plan suits any parameters (the ingest insert, the claim's delivery insert, the settle; at most 64 texts) once per connection: about 13 % less PostgreSQL CPU per stored event in the bench. Behind a pooler in transaction mode it is off, and `on` there is refused (start-up stops, exit 78): the pooler hands each transaction to another server connection, where the prepared name is missing or already exists. An undeclared one is found at its first such answer: hookrun logs it, turns prepared statements off and runs the statement again",
  },
  {
    name: 'DATA_DIR',
    default: '`.data`',
    feature: 'database',
    description:
      "embedded database folder (locked with the kernel's `flock`, through util-linux's `flock` or, where that is missing as on macOS, perl: one process per folder, also across containers sharing it)",
  },
  {
    name: 'EMBEDDED_FSYNC',
    default: '`on`',
    feature: 'database',
    description:
      "embedded database: PostgreSQL's fsyncs reach the disk, so each commit's WAL is on disk before the 2xx; `off` for development only (no fsync at all: an acknowledged event then survives `kill -9` but not an OS crash)",
  },
  { name: 'DB_TIMEOUT_MS', default: '`1500`', feature: 'webhooks', description: 'how long a receiver waits for the database before answering 503' },
  {
    name: 'HOOKRUN_PROJECT',
    default:
      'package.json\'s `"hookrun": { "project" }`, else `./hookrun/` when it holds a project and the working directory does not, else the working directory',
    feature: 'project',
    description: 'the project folder: its `jobs/`, `handlers/`, `migrations/`, platform.json and `.env` (`--project <dir>` sets it)',
  },
  {
    name: 'PLATFORM_CONFIG',
    default: '`platform.json`',
    feature: 'cron',
    description: 'the platform.json file (crons, custom webhooks, built-in handler switches), relative to the project',
  },
  {
    name: 'CRON_SECRET',
    default: 'unset → `/cron` closed',
    feature: 'cron',
    description:
      "`Authorization: Bearer <CRON_SECRET>` for `/cron/*`; at least 16 characters (Vercel's minimum). Shorter, `/cron` answers 503 `not_configured` saying so, and the rest of hookrun serves. Unset, `/cron/<job>` answers 403 to everyone (except as `CRON_LOCAL_CALLERS` allows). Behind a reverse proxy, set it",
  },
  {
    name: 'CRON_LOCAL_CALLERS',
    default: '`refuse` (`allow` under `hookrun dev`)',
    feature: 'cron',
    description:
      "`allow` states that no proxy is in front of hookrun: without CRON_SECRET, a caller on this machine (loopback, no `Forwarded`/`X-Forwarded-*`/`Via`, not a web page) may run `/cron/<job>`. Never behind nginx, Caddy or a load balancer on this machine: they connect from loopback on everyone's behalf, and nginx's bare `proxy_pass` adds no header to tell. Ignored when CRON_SECRET is set",
  },
  { name: 'SCHEDULER', default: '`on`', feature: 'cron', description: '`off` when an outside scheduler calls `/cron/<job>` (same as `start --no-scheduler`)' },
  ...ADMIN_ACCESS_VARIABLES,
  {
    name: 'METRICS_TOKEN',
    default: 'unset → `/metrics` answers loopback callers only',
    feature: 'metrics',
    description:
      'when set, `/metrics` needs `Authorization: Bearer <METRICS_TOKEN>`; at least 32 characters. Unset, only a caller on this machine (loopback, no proxy headers, not a web page) is served: set it for a Prometheus elsewhere, behind a proxy or under `hookrun/next`',
  },
  { name: 'LOG_LEVEL', default: '`info`', feature: 'logging', description: '`fatal` … `trace`, `silent`' },
  {
    name: 'WEBHOOK_TOLERANCE_SECONDS',
    default: '`300`',
    feature: 'webhooks',
    description: 'signature timestamp tolerance, applied to the past **and** the future',
  },
  {
    name: 'MAX_BODY_BYTES',
    default: '`1048576`',
    feature: 'webhooks',
    description: 'webhook body limit (413 above it); `/api`, `/admin` and `/cron` bodies are limited to 64 KiB',
  },
  {
    name: 'MAX_INFLIGHT_BODY_BYTES',
    default: '`67108864`',
    feature: 'webhooks',
    description:
      'bytes of request bodies read or held at once, all routes together, counted as they arrive (a declared `Content-Length` holds nothing); past it an upload is `503 unavailable` (the provider retries). Its last eighth is kept for bodies of at most 64 KiB, so large uploads that stall cannot take the room of a delivery of a few KB; and every body must arrive within 5 s plus 1 s per 128 KiB, or it is `408 request_timeout` and gives its bytes back',
  },
  {
    name: 'MAX_INFLIGHT_BODY_BYTES_PER_ADDRESS',
    default: 'a quarter of `MAX_INFLIGHT_BODY_BYTES`',
    feature: 'webhooks',
    description:
      "of those, what one client address (an IPv6 /64) may hold, at least one `MAX_BODY_BYTES` body; behind a reverse proxy every sender shares the proxy's address, so set it to `MAX_INFLIGHT_BODY_BYTES` there",
  },
  {
    name: 'PUBLIC_URL',
    default: 'unset',
    feature: 'webhooks',
    description:
      'the origin senders and people call (`https://api.example.com`), when a proxy in front changes it: for senders that sign the URL (Twilio), and the console accepts form posts from it when the proxy rewrites `Host`',
  },
  {
    name: 'MAX_ATTEMPTS',
    default: '`10`',
    feature: 'inbox worker',
    description: "attempts of one handler's delivery before it is `dead` (10 attempts wait about 43 minutes in all)",
  },
  {
    name: 'LEASE_SECONDS',
    default: '`30`',
    feature: 'inbox worker',
    description:
      "how long a worker's claim of a delivery lasts before another may take it; renewed every third of it while the handler runs, so only a crashed worker's deliveries are taken over",
  },
  {
    name: 'HANDLER_TIMEOUT_SECONDS',
    default: '`30`',
    feature: 'inbox worker',
    description: "a handler's time limit: then `ctx.signal` aborts, the handler is waited for up to 5 s more, and its delivery is retried later",
  },
  { name: 'SHUTDOWN_TIMEOUT_MS', default: '`8000`', feature: 'server', description: 'how long SIGTERM waits for requests, handlers and jobs to finish' },
  {
    name: 'SHUTDOWN_READY_GRACE_MS',
    default: '`5000`; always `0` under `hookrun dev`',
    feature: 'server',
    description:
      'after SIGTERM or SIGINT, how long `/ready` answers 503 while the listener still accepts and serves requests, so a load balancer or Kubernetes Service stops sending here before the port closes (as a `preStop` sleep would); then the listener closes and the drain of `SHUTDOWN_TIMEOUT_MS` begins. `0` closes at once; `hookrun worker` has no listener and skips it',
  },
  {
    name: 'EVENT_RETENTION_DAYS',
    default: '`30`',
    feature: 'retention',
    description:
      'processed, ignored and dead events older than this are deleted (hourly, in batches of 1,000); `0` keeps them forever. Pending and failed events are never deleted',
  },
  {
    name: 'DEDUPE_RETENTION_DAYS',
    default: '`90`',
    feature: 'retention',
    description:
      "a deleted event's `(source, key)` is kept this long, so a provider's late retry is still answered `duplicate`; at least `EVENT_RETENTION_DAYS`",
  },
  { name: 'CRON_RUN_RETENTION_DAYS', default: '`90`', feature: 'retention', description: '`cron_runs` older than this are deleted; `0` keeps them forever' },
  {
    name: 'AUDIT_RETENTION_DAYS',
    default: '`365`',
    feature: 'retention',
    description: "the audit's entries (who did what from the console, the admin API and the CLI) older than this are deleted; `0` keeps them forever",
  },
  ...OBSERVABILITY_VARIABLES,
  {
    name: 'STRIPE_SECRET_KEY',
    default: 'unset',
    feature: 'Stripe API',
    description:
      "`sk_…` or `rk_…` (read access to customers, subscriptions, events): payments handlers store the API's current objects, and `hookrun reconcile payments` works",
  },
  {
    name: 'STRIPE_API_BASE',
    default: 'unset → `https://api.stripe.com`',
    feature: 'Stripe API',
    description:
      'where the Stripe client sends requests (tests point it at a local server); `http://` only to this machine (127.0.0.0/8, `::1`, `localhost`), so the key never travels unencrypted',
  },
  ...SENDER_API_VARIABLES,
  {
    name: 'HOOKRUN_REMOTE_TOKEN',
    default: 'unset',
    feature: 'CLI',
    description: "a deployed hookrun's `ADMIN_TOKEN`, for `hookrun listen` and `events pull` (or `--token`)",
  },
  {
    name: 'CHANGES_DATABASE_URL',
    default: 'unset → off',
    feature: 'change capture',
    description:
      "the product's PostgreSQL (`wal_level=logical`, a user with `REPLICATION`): capture its committed changes from the WAL; holds a password, never logged",
  },
  {
    name: 'CHANGES_PUBLICATION',
    default: '`hookrun_changes`',
    feature: 'change capture',
    description: 'the publication (you create it) whose tables are captured',
  },
  {
    name: 'CHANGES_SLOT',
    default: '`hookrun_changes`',
    feature: 'change capture',
    description: 'the replication slot hookrun creates and streams (`[a-z0-9_]`)',
  },
  {
    name: 'CHANGES_MAX_RETAINED_WAL_MB',
    default: '`1024`',
    feature: 'change capture',
    description: 'warn (and alert `wal_retained`) when the slot makes the database keep more WAL than this',
  },
];
