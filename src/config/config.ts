import { resolve } from 'node:path';
import { ConfigError } from '../errors.js';
import {
  readChanges,
  readChoice,
  readInt,
  readOneOf,
  readOnOff,
  readOrigin,
  readRetention,
  readSchema,
  readStripe,
  type ChangesSettings,
  type Env,
  type RetentionDays,
  type StripeSettings,
} from './values.js';
import { readAlerts, readTelemetry, type AlertDestinationSettings, type AlertSettings, type TelemetrySettings } from './observability.js';
import { readBuiltInHandlerSwitches, readPlatformConfig, readWebhookSchemes } from './platform.js';
import type { CronEntry, WebhookSchemeEntry } from './platform-entries.js';
import { readDatabaseUrl, readPooler, readPreparedStatements, type PoolerSettings } from './database-connection.js';
import { resolveProjectDir } from './project-dir.js';
import { checkBearerValues, readBearer, readCronAccess, readSecret } from './secrets.js';
import { readOperators, type Operator } from './operators.js';
import { readSenderApis, type SenderApiSettings } from './senders.js';
import type { SecretSetting } from '../webhooks/provider.js';
import {
  CHOOSABLE_SOURCES,
  PROVIDERS_BY_ROUTE,
  SOURCES,
  choiceEnvName,
  defaultProvider,
  isChoosable,
  providerFor,
  routeSecretEnvName,
  type ProviderChoice,
  type Source,
} from '../webhooks/providers/index.js';

export type { AlertDestinationSettings, AlertSettings, ChangesSettings, RetentionDays, StripeSettings, TelemetrySettings };

/** The seed's three receivers; the others are optional extras, named in `check` but not warned about. */
export const SEED_SOURCES: readonly Source[] = ['payments', 'auth', 'database'];

/**
 * Each receiver's secret env names, first found wins (operators rely on these
 * names: docs/design.md): a route that offers a choice reads `<ROUTE>_WEBHOOK_SECRET`,
 * then its chosen provider's own names; any other route its provider's names.
 */
function secretEnvNamesFor(choice: ProviderChoice): Record<Source, readonly string[]> {
  return Object.fromEntries(
    SOURCES.map((source) => {
      const own = providerFor({ providers: choice }, source).secretEnv;
      return [source, isChoosable(source) ? [routeSecretEnvName(source), ...own] : own];
    }),
  ) as Record<Source, readonly string[]>;
}

/** `<ROUTE>_PROVIDER` for each route that offers a choice; unset → the first listed. */
function readProviderChoice(env: Env): ProviderChoice {
  return Object.fromEntries(
    CHOOSABLE_SOURCES.map((source) => {
      const names = Object.keys(PROVIDERS_BY_ROUTE[source]);
      return [source, readChoice(env, choiceEnvName(source), names, defaultProvider(source).name)];
    }),
  ) as ProviderChoice;
}

/** A custom sender from platform.json `webhooks`, with its secret (undefined: the route answers 503). */
export type CustomWebhook = WebhookSchemeEntry & { secret: SecretSetting | undefined };

function readCustomWebhooks(env: Env, path: string): CustomWebhook[] {
  return readWebhookSchemes(path).map((scheme, index) => {
    if ((SOURCES as readonly string[]).includes(scheme.route))
      throw new ConfigError(`${path} webhooks[${index}].route: "${scheme.route}" is a built-in receiver; choose another route.`);
    return { ...scheme, secret: readSecret(env, [scheme.secretEnv]) };
  });
}

/** Everything hookrun reads from the outside world, read once at start-up. */
export interface Config {
  port: number;
  host: string | undefined;
  /** Unset → embedded PGlite in `dataDir`. */
  databaseUrl: string | undefined;
  /** `DATABASE_POOLER` and `DATABASE_DIRECT_URL`: a pooler in front of DATABASE_URL, and the direct connection beside it. */
  pooler: PoolerSettings;
  /** `HOOKRUN_SCHEMA` (default `hookrun`): the PostgreSQL schema of hookrun's tables, on PostgreSQL and embedded alike. */
  schema: string;
  /** `DATABASE_PREPARED_STATEMENTS` (default on; off with DATABASE_POOLER=transaction): prepare the hot statements planned once (db/statement-names.ts) on each connection; less PostgreSQL CPU per event. */
  preparedStatements: boolean;
  dataDir: string;
  /** The user's project (`--project`, `HOOKRUN_PROJECT`, package.json's `hookrun.project`, `./hookrun/`, else the working directory: project-dir.ts): its `jobs/`, `handlers/` and platform.json. */
  projectDir: string;
  platformConfigPath: string;
  /** The parsed `crons` array of platform.json; `[]` when the file does not exist. */
  crons: CronEntry[];
  /** platform.json `builtInHandlers`: shipped handlers turned on or off by name (absent: on). */
  builtInHandlers: Record<string, boolean>;
  /** platform.json `webhooks`: custom senders, each with the secret read from its `secretEnv`. */
  customWebhooks: CustomWebhook[];
  secrets: Record<Source, SecretSetting | undefined>;
  /** `<ROUTE>_PROVIDER` for each route several providers serve (`PAYMENTS_PROVIDER`, `AUTH_PROVIDER`). */
  providers: ProviderChoice;
  /** The env names each source's secret is read from, with the chosen providers' own names. */
  secretEnvNames: Record<Source, readonly string[]>;
  cronSecret: string | undefined;
  /** Why CRON_SECRET is set but unusable (shorter than 16 characters): `/cron` answers 503 `not_configured` with it; everything else serves. */
  cronSecretProblem: string | undefined;
  /** `CRON_LOCAL_CALLERS=allow`: no proxy in front, so without CRON_SECRET a loopback caller may run `/cron/<job>` (secrets.ts). */
  cronLocalCallers: boolean;
  /** `ADMIN_TOKENS` and `ADMIN_TOKEN` (as `admin`): who may sign in to `/api` and `/admin`, each with a role; none → both answer 503. */
  operators: readonly Operator[];
  /** `HOOKRUN_ADMIN_TOKEN`, else `ADMIN_TOKEN`: the token the CLI's commands sign in with, so the audit names who ran them. */
  cliToken: string | undefined;
  /** `METRICS_TOKEN`: when set, `/metrics` requires `Authorization: Bearer <METRICS_TOKEN>`; unset, it answers loopback callers only. */
  metricsToken: string | undefined;
  scheduler: boolean;
  logLevel: string;
  toleranceSeconds: number;
  maxBodyBytes: number;
  /** Embedded database: fsync the WAL after each inbox commit (`EMBEDDED_FSYNC=off` for development only). */
  embeddedFsync: boolean;
  /** Bytes of webhook bodies read or held at once (all receivers); past it a new upload is 503. */
  maxInflightBodyBytes: number;
  /** Of those, what one client address may hold (default a quarter); behind a proxy every client shares its address. */
  maxInflightBodyBytesPerAddress: number;
  maxAttempts: number;
  /** A claim's lease; the worker renews it every third of it while a handler runs. */
  leaseSeconds: number;
  /** A handler's time limit: then its `ctx.signal` aborts and the event is retried later. */
  handlerTimeoutSeconds: number;
  /** Days to keep finished events, their keys (late retries stay duplicates) and cron runs; 0 keeps forever. */
  retention: RetentionDays;
  /** The alert destinations (Slack, PagerDuty, a signed webhook) and the thresholds; undefined → no alerts. */
  alerts: AlertSettings | undefined;
  /** `OTEL_EXPORTER_OTLP_ENDPOINT`: traces and metrics to an OpenTelemetry collector; undefined → off, the SDK never loaded. */
  telemetry: TelemetrySettings | undefined;
  /** How long a receiver waits for the database before answering 503 `unavailable`. */
  dbTimeoutMs: number;
  shutdownTimeoutMs: number;
  /** After SIGTERM or SIGINT, how long `/ready` answers 503 while requests are still served, so load balancers stop sending here before the listener closes. */
  shutdownReadyGraceMs: number;
  /**
   * `STRIPE_SECRET_KEY` (and `STRIPE_API_BASE`): payments handlers store what
   * the API says, not what the event says, and `hookrun reconcile` can list
   * missed events. Unset → event order rules, no reconcile.
   */
  stripe: StripeSettings | undefined;
  /** `GITHUB_TOKEN`, `PADDLE_API_KEY`, `WORKOS_API_KEY`, `CLERK_SECRET_KEY` and their API bases: the senders' APIs `hookrun reconcile` calls. */
  senderApis: SenderApiSettings;
  /** `CHANGES_DATABASE_URL` and its slot: capture the product database's committed changes from its WAL; undefined → off. */
  changes: ChangesSettings | undefined;
  /** `PUBLIC_URL`: the origin senders and people call (behind a proxy it differs from what hookrun sees); Twilio signs it, the console accepts form posts from it. */
  publicUrl: URL | undefined;
  /** `HOOKRUN_REMOTE_TOKEN`: a deployed hookrun's ADMIN_TOKEN, for `hookrun listen` and `events pull`. */
  remoteToken: string | undefined;
  /** The environment this config was read from: project handlers take the variables they declare from it (never log it: it holds the secrets). */
  environment: Readonly<Env>;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * Read and validate the environment once. Only this module reads `process.env`
 * (read once at start-up, so a wrong value stops start-up rather than a request
 * later, and tests pass their own `env`); a wrong value throws a `ConfigError` whose
 * message names the setting and the fix.
 */
export function loadConfig(env: Env = process.env, cwd: string = process.cwd()): Config {
  const logLevel = readOneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info', `LOG_LEVEL="${env.LOG_LEVEL}" is not valid: use one of ${LOG_LEVELS.join(', ')}.`);
  const scheduler = readOnOff(env, 'SCHEDULER', true);
  const databaseUrl = readDatabaseUrl(env);
  const pooler = readPooler(env, databaseUrl);
  const projectDir = resolveProjectDir(env, cwd);
  const platformConfigPath = resolve(projectDir, env.PLATFORM_CONFIG || 'platform.json');
  const providers = readProviderChoice(env);
  const secretEnvNames = secretEnvNamesFor(providers);
  const secrets = Object.fromEntries(SOURCES.map((source) => [source, readSecret(env, secretEnvNames[source])])) as Record<Source, SecretSetting | undefined>;
  checkBearerValues(secrets.database);
  const maxInflightBodyBytes = readInt(env, 'MAX_INFLIGHT_BODY_BYTES', 64 * 1024 * 1024, 1024, 4 * 1024 * 1024 * 1024);
  return {
    port: readInt(env, 'PORT', 3002, 0, 65535),
    host: env.HOST || undefined,
    databaseUrl,
    pooler,
    schema: readSchema(env),
    preparedStatements: readPreparedStatements(env, pooler),
    dataDir: resolve(cwd, env.DATA_DIR || '.data'),
    projectDir,
    platformConfigPath,
    crons: readPlatformConfig(platformConfigPath, env),
    customWebhooks: readCustomWebhooks(env, platformConfigPath),
    builtInHandlers: readBuiltInHandlerSwitches(platformConfigPath),
    secrets,
    providers,
    secretEnvNames,
    ...readCronAccess(env),
    operators: readOperators(env, readBearer(env, 'ADMIN_TOKEN', '/api or /admin', 'unset it to keep the admin API closed')),
    cliToken: env.HOOKRUN_ADMIN_TOKEN || env.ADMIN_TOKEN || undefined,
    metricsToken: readBearer(env, 'METRICS_TOKEN', '/metrics', 'unset it to serve /metrics to callers on this machine only'),
    scheduler,
    logLevel,
    toleranceSeconds: readInt(env, 'WEBHOOK_TOLERANCE_SECONDS', 300, 1, 86_400),
    maxBodyBytes: readInt(env, 'MAX_BODY_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024),
    embeddedFsync: readOnOff(env, 'EMBEDDED_FSYNC', true),
    maxInflightBodyBytes,
    maxInflightBodyBytesPerAddress: readInt(env, 'MAX_INFLIGHT_BODY_BYTES_PER_ADDRESS', Math.floor(maxInflightBodyBytes / 4), 1024, 4 * 1024 * 1024 * 1024),
    maxAttempts: readInt(env, 'MAX_ATTEMPTS', 10, 1, 100),
    leaseSeconds: readInt(env, 'LEASE_SECONDS', 30, 1, 3600),
    handlerTimeoutSeconds: readInt(env, 'HANDLER_TIMEOUT_SECONDS', 30, 1, 3600),
    retention: readRetention(env),
    alerts: readAlerts(env),
    telemetry: readTelemetry(env),
    dbTimeoutMs: readInt(env, 'DB_TIMEOUT_MS', 1500, 100, 60_000),
    shutdownTimeoutMs: readInt(env, 'SHUTDOWN_TIMEOUT_MS', 8000, 100, 120_000),
    shutdownReadyGraceMs: readInt(env, 'SHUTDOWN_READY_GRACE_MS', 5000, 0, 120_000),
    stripe: readStripe(env),
    senderApis: readSenderApis(env),
    changes: readChanges(env),
    publicUrl: readOrigin(env, 'PUBLIC_URL', 'https://api.example.com, where senders post and people open the console'),
    remoteToken: env.HOOKRUN_REMOTE_TOKEN || undefined,
    environment: env,
  };
}
