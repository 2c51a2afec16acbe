import { setFlagsFromString } from 'node:v8';
import { Option, type Command } from 'commander';
import { SEED_SOURCES, type Config } from '../config/config.js';
import { cronAccessWarning } from '../config/secrets.js';
import { ConfigError } from '../errors.js';
import { createLogger } from '../log.js';
import { startService } from '../service.js';
import { cliIo, loadCliConfig } from './io.js';
import { onLauncherExit, startedByNpm } from './launcher-watch.js';

/** `hookrun start`'s switches (commander turns `--no-x` into `x: false`). */
interface StartFlags {
  scheduler: boolean;
  worker: boolean;
  /** Set by `hookrun dev`: the URL people call, printed instead of this child's private port. */
  devUrl?: string;
}

/** Without the in-process worker, events are processed only by `hookrun worker` processes: PostgreSQL only. */
function checkNoWorker(config: Config): void {
  if (!config.databaseUrl) {
    throw new ConfigError(
      '--no-worker needs DATABASE_URL: the embedded database (DATA_DIR) serves one process, so nothing else could process the events this one stores. Drop --no-worker, or use PostgreSQL and run `hookrun worker` beside it.',
    );
  }
}

/**
 * How far V8 lets the old generation grow past what the last full GC kept,
 * in percent. V8's own factor reaches 4x on a small heap: under the bench's
 * ingest on PostgreSQL the old space went from ~20 MB live to ~80 MB before
 * each full GC. 2x cut the peak RSS by ~30 MB with no measurable CPU per
 * request; 1.5x reached ~120 MB but cost 2-18 % CPU per request in four A/B
 * runs (docs/performance.md, "Start-up and memory"). PostgreSQL only: with the
 * embedded database it applies to PGlite's thread too, and its peak RSS rose
 * by 15-19 MB in two runs. Node does not take this flag in NODE_OPTIONS;
 * given on node's own command line, it is left as given.
 */
const HEAP_GROWING_PERCENT = 100;

/** What the shutdown log line names as its cause when the npm that started hookrun has gone (launcher-watch.ts). */
const LAUNCHER_EXITED = 'launcher exited';

async function runService(config: Config, parts: { http: boolean; scheduler: boolean; worker: boolean; devUrl?: string }): Promise<void> {
  // Read by V8 at each full GC, so setting it now works (measured); unlike the young generation's size, fixed at start.
  if (config.databaseUrl && !process.execArgv.some((flag) => /^--heap[-_]growing[-_]percent\b/.test(flag)))
    setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  const log = createLogger(config.logLevel);
  const service = await startService(config, { log, ...parts });
  if (service.url) {
    // Bound to every interface ([::] or 0.0.0.0): a link a person can click is localhost's.
    const port = new URL(service.url).port;
    const local = parts.devUrl ?? (config.host && !['0.0.0.0', '::'].includes(config.host) ? service.url : `http://localhost:${port}`);
    const url = parts.devUrl ?? service.url;
    log.info({ url, database: service.db.kind, dashboard: `${local}/admin` }, `hookrun listening on ${url}`);
    if (config.operators.length > 0) log.info(`dashboard: ${local}/admin (log in with ADMIN_TOKEN or your token of ADMIN_TOKENS)`);
  } else {
    log.info({ database: service.db.kind }, 'hookrun worker running: processing stored events');
  }
  if (parts.http) {
    for (const custom of config.customWebhooks) {
      if (!custom.secret)
        log.warn(
          `${custom.secretEnv} is not set: /webhooks/${custom.route} (platform.json webhooks) answers 503 not_configured until it is set and hookrun restarted.`,
        );
    }
    for (const source of SEED_SOURCES) {
      if (!config.secrets[source])
        log.warn(`${config.secretEnvNames[source][0]} is not set: /webhooks/${source} answers 503 not_configured until it is set and hookrun restarted.`);
    }
  }
  if (parts.http && config.cronSecretProblem) log.warn(config.cronSecretProblem);
  else if (parts.http && !config.cronSecret) log.warn(cronAccessWarning(config));
  if (parts.http && config.operators.length === 0) {
    log.warn('Neither ADMIN_TOKEN nor ADMIN_TOKENS is set: the admin API and dashboard answer 503 until one is.');
  }
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    if (signal === LAUNCHER_EXITED)
      log.info({ signal }, 'shutdown requested: the npm that started hookrun has exited (it does not pass signals on through sh)');
    else log.info({ signal }, 'shutdown requested');
    // Under `hookrun dev` no load balancer watches /ready (the front holds requests during a restart): close at once.
    service.stop({ readyGraceMs: parts.devUrl ? 0 : config.shutdownReadyGraceMs }).then(
      () => process.exit(0),
      (error: Error) => {
        log.error({ err: { message: error.message } }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  // Every signal is taken, not only the first: Ctrl-C under `npm start` reaches hookrun twice (from the terminal and
  // from npm), and the default action of the second would cut the drain short; the drain is bounded by SHUTDOWN_TIMEOUT_MS.
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  if (startedByNpm(cliIo().env)) onLauncherExit(() => shutdown(LAUNCHER_EXITED));
}

/** `hookrun start` and `hookrun worker`: the long-running modes. */
export function registerStartCommands(program: Command): void {
  program
    .command('start')
    .description('migrate, validate config, then serve webhooks and cron routes, process events and run the scheduler')
    .option('--no-scheduler', 'do not run the built-in scheduler (an outside scheduler calls /cron/<job>)')
    .option('--no-worker', 'receive and store only; `hookrun worker` processes (PostgreSQL only)')
    .addOption(new Option('--dev-url <url>').hideHelp())
    .action(async (flags: StartFlags) => {
      const config = loadCliConfig();
      if (!flags.worker) checkNoWorker(config);
      await runService(config, { http: true, worker: flags.worker, scheduler: flags.scheduler && config.scheduler, devUrl: flags.devUrl });
    });
  program
    .command('worker')
    .description('process stored events only: no HTTP server, no scheduler')
    .action(async () => {
      await runService(loadCliConfig(), { http: false, worker: true, scheduler: false });
    });
}
