import { loadConfig, type Config } from '../config/config.js';
import { ConfigError, messageOf } from '../errors.js';
import { createLogger, type Logger } from '../log.js';
import { startService, type RunningService } from '../service.js';

/** Where the mounted service comes from: the project folder and the environment (tests pass their own). */
export interface MountSettings {
  /** The hookrun project folder (`jobs/`, `handlers/`, platform.json), relative to the working directory; default as the CLI finds it (HOOKRUN_PROJECT, package.json's `hookrun.project`, `./hookrun/`, the working directory). */
  project?: string;
  env?: Readonly<Record<string, string | undefined>>;
}

/** Why the embedded database cannot serve a Next.js deployment, said where it is refused. */
export const EMBEDDED_REFUSED =
  "hookrun inside Next.js needs PostgreSQL: set DATABASE_URL (through your provider's pooler, with DATABASE_POOLER=transaction and DATABASE_DIRECT_URL for migrations). The embedded database (DATA_DIR) keeps its files on one machine's disk and lets one process hold them, while a serverless platform runs many short-lived copies of the function, each with a disk that is thrown away.";

/** The configuration a mounted hookrun runs with: the project's, PostgreSQL only. */
export function mountedConfig(settings: MountSettings, cwd: string = process.cwd()): Config {
  const env = { ...(settings.env ?? process.env) };
  if (settings.project !== undefined) env.HOOKRUN_PROJECT = settings.project;
  const config = loadConfig(env, cwd);
  if (!config.databaseUrl) throw new ConfigError(EMBEDDED_REFUSED);
  return config;
}

/**
 * One hookrun per function instance, started on its first request and kept
 * for the next ones (a warm instance answers without a start-up). It serves
 * no port and runs no loops: requests arrive through the route handlers, and
 * processing happens after each answer and from the drain route. A start that
 * fails is not kept, so the next request tries again (a database that was
 * unreachable for a moment must not break the instance for good).
 */
export class MountedService {
  private starting: Promise<RunningService> | undefined;
  private log: Logger | undefined;

  constructor(private readonly settings: MountSettings) {}

  /** The running service, started on first use. */
  get(): Promise<RunningService> {
    this.starting ??= this.start().catch((error: unknown) => {
      this.starting = undefined;
      throw error;
    });
    return this.starting;
  }

  /** The logger of the service (or a fresh one when it never started), for what goes wrong around it. */
  logger(): Logger {
    return (this.log ??= createLogger(process.env.LOG_LEVEL ?? 'info', false));
  }

  private async start(): Promise<RunningService> {
    const config = mountedConfig(this.settings);
    this.log = createLogger(config.logLevel, false);
    try {
      return await startService(config, { log: this.log, http: false, scheduler: false, background: false });
    } catch (error) {
      this.log.error({ err: { message: messageOf(error) } }, 'hookrun could not start inside Next.js');
      throw error;
    }
  }

  /** Stop it (tests; a platform freezes or ends the instance instead). */
  async stop(): Promise<void> {
    const starting = this.starting;
    this.starting = undefined;
    if (starting) await (await starting.catch(() => undefined))?.stop();
  }
}
