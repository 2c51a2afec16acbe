import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Config } from '../config/config.js';
import { ConfigError, messageOf } from '../errors.js';
import { requireEmbeddedDatabase } from '../db/client.js';
import { loadHandlers } from '../project/load-project.js';
import { openServiceDatabase } from '../service.js';
import { createVerifiers } from '../webhooks/verifiers.js';
import { scheduledJobs } from './cron.js';
import { embeddedHolderPid } from './local-database.js';

/** One check `hookrun check` ran: its name, whether it passed, and what it found or why `hookrun start` would refuse. */
export interface CheckOutcome {
  name: 'settings' | 'secrets' | 'jobs' | 'handlers' | 'database';
  ok: boolean;
  /** What passed (ok) or the refusal's message, naming the file or setting and the fix (failed). */
  detail: string;
  /** Whether the refusal is a configuration error (exit 78) rather than an unexpected one (exit 1). */
  config?: boolean;
}

/** Run one check: its own failure is recorded, not thrown, so the others still run and each is reported. */
async function attempt(name: CheckOutcome['name'], check: () => Promise<string> | string): Promise<CheckOutcome> {
  try {
    return { name, ok: true, detail: await check() };
  } catch (error) {
    return { name, ok: false, detail: messageOf(error), config: error instanceof ConfigError };
  }
}

/** The nearest folder on the way up from `path` that exists. */
function nearestExisting(path: string): string {
  let at = path;
  while (!existsSync(at) && dirname(at) !== at) at = dirname(at);
  return at;
}

/**
 * The embedded database: opened (locked, booted, one query) only when it has
 * been made, since opening an empty DATA_DIR would create it. Not made yet,
 * the check is that `hookrun start` can make it: the nearest existing folder
 * on its path is a writable folder. Held by a running hookrun (`hookrun dev`
 * beside this check), it is not opened again: that process opened it. First of
 * all, PGlite must be installed (an image built for PostgreSQL leaves it out).
 */
async function checkEmbedded(config: Config): Promise<string> {
  requireEmbeddedDatabase();
  const holder = embeddedHolderPid(config);
  if (holder !== undefined) return `embedded PGlite in ${config.dataDir}: open in the running hookrun (pid ${holder}), so not opened again`;
  if (existsSync(join(config.dataDir, 'pgdata', 'PG_VERSION'))) {
    const db = await openServiceDatabase(config);
    try {
      await db.query('SELECT 1');
    } finally {
      await db.close();
    }
    return `embedded PGlite in ${config.dataDir} opens`;
  }
  const parent = nearestExisting(config.dataDir);
  const writable = (() => {
    try {
      accessSync(parent, constants.W_OK);
      return statSync(parent).isDirectory();
    } catch {
      return false;
    }
  })();
  if (!writable)
    throw new ConfigError(
      `DATA_DIR ${config.dataDir}: cannot be created (${parent} is not a writable folder): set DATA_DIR to a folder this user may write, or DATABASE_URL to use PostgreSQL.`,
    );
  return `embedded PGlite in ${config.dataDir}: not created yet (hookrun start creates it; check does not)`;
}

/** The database as `hookrun start` opens it: PostgreSQL answers one query (a missing database, bad credentials, no server fail here). */
async function checkDatabase(config: Config): Promise<string> {
  if (!config.databaseUrl) return checkEmbedded(config);
  const db = await openServiceDatabase(config);
  await db.close();
  return 'PostgreSQL answers';
}

/** What `scheduledJobs` found: the jobs, their platform.json schedules and the warnings about them. */
export type ScheduledJobs = Awaited<ReturnType<typeof scheduledJobs>>;

/**
 * What `hookrun start` refuses to start on, checked by the functions start
 * itself calls, without migrating or serving: the settings (`load`: env,
 * .env, platform.json), the webhook secrets (createVerifiers), the jobs and
 * platform.json crons (validateCrons over the loaded jobs, their `env`
 * settings required), the handlers (loadHandlers: every file loaded, every
 * `on` name parsed) and the database (opened as start opens it). Each runs
 * even when another failed; without settings there is nothing to check.
 */
export async function runStartChecks(load: () => Config): Promise<{ config?: Config; checks: CheckOutcome[]; crons?: ScheduledJobs }> {
  let config: Config | undefined;
  const settings = await attempt('settings', () => {
    config = load();
    return 'environment, .env and platform.json read';
  });
  if (!config) return { checks: [settings] };
  const loaded = config;
  let crons: ScheduledJobs | undefined;
  const checks = [
    settings,
    await attempt('secrets', () => {
      createVerifiers(loaded);
      return 'every webhook secret set is well formed';
    }),
    await attempt('jobs', async () => {
      crons = await scheduledJobs(loaded, loaded.environment);
      return `${crons.jobs.length} job${crons.jobs.length === 1 ? '' : 's'}, ${crons.scheduled.length} scheduled in platform.json`;
    }),
    await attempt('handlers', async () => {
      const { project } = await loadHandlers(loaded);
      return `${project.length} project handler${project.length === 1 ? '' : 's'} loaded, every event name known`;
    }),
    await attempt('database', () => checkDatabase(loaded)),
  ];
  return { config, checks, crons };
}
