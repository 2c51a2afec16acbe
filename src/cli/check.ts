import type { Command } from 'commander';
import { SEED_SOURCES, type Config } from '../config/config.js';
import { cronAccessWarning } from '../config/secrets.js';
import { SHARED_ADMIN_NAME } from '../config/operators.js';
import { providerFor, SOURCES } from '../webhooks/providers/index.js';
import { displayPath } from '../module-files.js';
import { tickInZone } from '../cron/time-zone.js';
import { createVerifiers } from '../webhooks/verifiers.js';
import { scheduledJobs } from './cron.js';
import { printJson, say } from './output.js';
import { loadCliConfig } from './io.js';
import { runStartChecks, type CheckOutcome, type ScheduledJobs } from './check-steps.js';
import { ConfigError } from '../errors.js';

/** Query parameters of a connection string that hold a secret (libpq's `password`, `sslpassword`, and the like). */
const SECRET_PARAM = /pass|secret|token|key/i;

/** The database location as people can read it, with the password masked wherever it is written. */
export function describeDatabase(config: Pick<Config, 'databaseUrl' | 'dataDir'>): { kind: 'pglite' | 'postgres'; location: string } {
  if (!config.databaseUrl) return { kind: 'pglite', location: config.dataDir };
  const url = new URL(config.databaseUrl);
  if (url.password) url.password = '***';
  for (const name of [...url.searchParams.keys()]) if (SECRET_PARAM.test(name)) url.searchParams.set(name, '***');
  return { kind: 'postgres', location: url.toString() };
}

/**
 * The report `hookrun check` prints once its checks passed (check-steps.ts):
 * the database, each route's sender, the crons with their next runs. Throws
 * ConfigError (exit 78) on a malformed secret or platform.json entry; missing
 * optional settings are warnings. `checked` reuses the jobs already loaded.
 */
export async function checkConfig(config: Config, checked?: ScheduledJobs) {
  createVerifiers(config);
  const crons = checked ?? (await scheduledJobs(config));
  const warnings = [...crons.warnings];
  const sources = Object.fromEntries(
    SOURCES.map((source) => {
      const setting = config.secrets[source];
      // The seed's receivers are expected; the other senders (GitHub, Shopify, …) are opt-in, shown as not configured.
      if (!setting && SEED_SOURCES.includes(source))
        warnings.push(`${config.secretEnvNames[source][0]} is not set: /webhooks/${source} answers 503 not_configured.`);
      return [source, setting ? { provider: providerFor(config, source).title, envName: setting.envName, secrets: setting.values.length } : null];
    }),
  );
  for (const w of config.customWebhooks)
    if (!w.secret) warnings.push(`${w.secretEnv} is not set: /webhooks/${w.route} (platform.json) answers 503 not_configured.`);
  if (config.cronSecretProblem) warnings.push(config.cronSecretProblem);
  else if (!config.cronSecret) warnings.push(cronAccessWarning(config));
  if (config.pooler.mode === 'transaction' && !config.pooler.directUrl)
    warnings.push('DATABASE_POOLER=transaction without DATABASE_DIRECT_URL: instances find new events by a 1 s poll, not NOTIFY; set DATABASE_DIRECT_URL.');
  if (config.operators.length === 0) warnings.push('Neither ADMIN_TOKEN nor ADMIN_TOKENS is set: the admin API and the dashboard answer 503.');
  const now = Date.now();
  return {
    ok: true,
    database: describeDatabase(config),
    /** A pooler in front of PostgreSQL (DATABASE_POOLER), the direct URL beside it (password masked), and how instances are woken. */
    pooler: config.databaseUrl ? poolerReport(config.pooler) : null,
    port: config.port,
    sources,
    cronSecret: config.cronSecret !== undefined,
    adminToken: config.operators.some((o) => o.name === SHARED_ADMIN_NAME),
    /** Who may sign in to /api and /admin (ADMIN_TOKENS and ADMIN_TOKEN): names and roles, never tokens. */
    operators: config.operators.map((o) => ({ name: o.name, role: o.role })),
    /** platform.json `webhooks`: each custom route and whether its secret is set. */
    customWebhooks: config.customWebhooks.map((w) => ({ route: w.route, secretEnv: w.secretEnv, configured: w.secret !== undefined })),
    /** Where STRIPE_SECRET_KEY sends API calls (payments synced from the API, reconcile), or null when unset. */
    stripeApi: config.stripe ? (config.stripe.apiBase?.origin ?? 'https://api.stripe.com') : null,
    /** Where alerts go, each as its setting and host only (a URL's path, a routing key are credentials), or null when none is set. */
    alerts: config.alerts ? config.alerts.destinations.map(describeDestination) : null,
    /** Where OpenTelemetry traces go (origin only), or null when OTEL_EXPORTER_OTLP_ENDPOINT is unset. */
    telemetry: config.telemetry ? config.telemetry.tracesUrl.origin : null,
    /** The WAL capture: the product database (password masked), publication and slot; null when CHANGES_DATABASE_URL is unset. */
    changes: config.changes
      ? {
          database: describeDatabase({ databaseUrl: config.changes.databaseUrl, dataDir: '' }).location,
          publication: config.changes.publication,
          slot: config.changes.slot,
        }
      : null,
    scheduler: config.scheduler,
    platformConfig: displayPath(config.platformConfigPath),
    jobs: crons.jobs,
    crons: crons.scheduled.map((s) => ({
      job: s.job,
      path: s.path,
      schedule: s.schedule.expression,
      timezone: s.schedule.timezone,
      nextRuns: s.schedule.nextRuns(3, now).map((d) => d.toISOString()),
    })),
    warnings,
  };
}

/** How PostgreSQL is reached: the pooler's mode, the direct URL (password masked), and what wakes an instance for new events. */
/** One alert destination as `check` shows it: its setting and host, never the URL's path or the key. */
function describeDestination(destination: NonNullable<Config['alerts']>['destinations'][number]): string {
  if (destination.type === 'pagerduty') return `ALERT_PAGERDUTY_ROUTING_KEY set: to ${destination.eventsUrl.host}`;
  if (destination.type === 'webhook') return `ALERT_WEBHOOK_URL set (signed with ALERT_WEBHOOK_SECRET): to ${destination.url.host}`;
  return `${destination.setting} set: to ${destination.url.host}`;
}

function poolerReport(pooler: Config['pooler']) {
  const direct = pooler.directUrl ? describeDatabase({ databaseUrl: pooler.directUrl, dataDir: '' }).location : null;
  const listens = pooler.mode !== 'transaction' || direct !== null;
  return {
    mode: pooler.mode,
    direct,
    wakeUps: listens
      ? `NOTIFY over ${direct ? 'DATABASE_DIRECT_URL' : 'DATABASE_URL'}, a 1 s poll behind it`
      : 'a 1 s poll (no NOTIFY through a transaction pooler)',
  };
}

/** Each check on one line: ok with what it found, or failed (the reasons follow on stderr). */
function checkLines(checks: readonly CheckOutcome[]): string[] {
  return [
    'checks (what hookrun start refuses to start on):',
    ...checks.map((c) => `  ${c.name.padEnd(10)} ${c.ok ? `ok      ${c.detail}` : 'failed  (the reason follows)'}`),
  ];
}

/** The failed checks as one error: a ConfigError (exit 78) when each is one, as `hookrun start` would throw; each reason on its own line. */
function failure(failed: readonly CheckOutcome[]): Error {
  const message = `${failed.map((c) => `${c.name} check failed: ${c.detail}`).join('\nhookrun: ')}`;
  return failed.every((c) => c.config) ? new ConfigError(message) : new Error(message);
}

/** `hookrun check`: run what `hookrun start` checks before serving, and show what would run when, without starting anything. */
export function registerCheckCommand(program: Command): void {
  program
    .command('check')
    .description(
      "run start's checks without starting (settings, secrets, jobs and platform.json, handlers and their event names, the database); print each cron with its next 3 run times",
    )
    .option('--json', 'print the report as JSON')
    .addHelpText(
      'after',
      '\nExit codes: 0 every check passed (warnings allowed), 78 a check failed that would stop `hookrun start` (the message names the file or setting and the fix), 1 an unexpected error.',
    )
    .action(async (flags: { json?: boolean }) => {
      const { config, checks, crons } = await runStartChecks(loadCliConfig);
      const failed = checks.filter((c) => !c.ok);
      if (failed.length > 0 || !config) {
        if (flags.json) printJson({ ok: false, checks });
        else say(checkLines(checks).join('\n') + '\n');
        throw failure(failed);
      }
      const report = { ...(await checkConfig(config, crons)), checks };
      if (flags.json) return printJson(report);
      const out = [
        ...checkLines(checks),
        'configuration OK',
        `  database     ${report.database.kind === 'pglite' ? `embedded PGlite in ${report.database.location}` : `PostgreSQL ${report.database.location}`}`,
        ...(report.pooler
          ? [`  pooler       ${report.pooler.mode}: ${report.pooler.wakeUps}${report.pooler.direct ? `; direct ${report.pooler.direct}` : ''}`]
          : []),
        `  port         ${report.port}`,
        ...SOURCES.map(
          (s) =>
            `  ${`/webhooks/${s}`.padEnd(20)} ${report.sources[s] ? `${report.sources[s].provider}: ${report.sources[s].envName} (${report.sources[s].secrets} secret${report.sources[s].secrets > 1 ? 's' : ''})` : 'not configured'}`,
        ),
        ...report.customWebhooks.map(
          (w) => `  ${`/webhooks/${w.route}`.padEnd(20)} platform.json: ${w.configured ? w.secretEnv : `not configured (${w.secretEnv})`}`,
        ),
        `  CRON_SECRET  ${report.cronSecret ? 'set' : 'not set'}`,
        `  ADMIN_TOKEN  ${report.adminToken ? 'set' : 'not set'}`,
        `  operators    ${report.operators.map((o) => `${o.name} (${o.role})`).join(', ') || 'none: /api and /admin closed'}`,
        `  Stripe API   ${report.stripeApi ? `STRIPE_SECRET_KEY set: payments synced from ${report.stripeApi}` : 'not set: payments ordered by event time (STRIPE_SECRET_KEY)'}`,
        `  alerts       ${report.alerts ? `${report.alerts.join('; ')} (hookrun alert test sends one)` : 'not set: nobody is told of failing handlers or late jobs (ALERT_SLACK_WEBHOOK_URL, ALERT_PAGERDUTY_ROUTING_KEY, ALERT_WEBHOOK_URL)'}`,
        `  telemetry    ${report.telemetry ? `OpenTelemetry traces and metrics to ${report.telemetry}` : 'off (OTEL_EXPORTER_OTLP_ENDPOINT)'}`,
        `  changes      ${report.changes ? `capturing ${report.changes.database}: publication ${report.changes.publication}, slot ${report.changes.slot} (hookrun changes status)` : 'not set: no WAL capture (CHANGES_DATABASE_URL)'}`,
        `  scheduler    ${report.scheduler ? 'on' : 'off (SCHEDULER=off)'}`,
        `  jobs         ${report.jobs.join(', ') || 'none'}`,
        `crons (${report.platformConfig}):`,
        ...(report.crons.length === 0
          ? ['  none']
          : report.crons.map((c) => `  ${c.path}  "${c.schedule}" (${c.timezone})  next: ${c.nextRuns.map((r) => tickInZone(r, c.timezone)).join(', ')}`)),
        ...(report.warnings.length ? ['warnings:', ...report.warnings.map((w) => `  - ${w}`)] : []),
      ];
      say(out.join('\n') + '\n');
    });
}
