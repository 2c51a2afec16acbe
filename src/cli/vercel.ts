import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { Config } from '../config/config.js';
import { mergeVercelJson, vercelEntries } from '../cron/vercel-config.js';
import { ConfigError } from '../errors.js';
import { displayPath } from '../module-files.js';
import { scheduledJobs } from './cron.js';
import { printJson, say, warn } from './output.js';
import { cliIo, loadCliConfig } from './io.js';

/** vercel.json as it is now: {} when there is none; a file that is not a JSON object stops here, untouched. */
function readVercelJson(file: string): Record<string, unknown> {
  if (!existsSync(file)) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ConfigError(`${displayPath(file)} is not valid JSON (${(error as Error).message}); fix it, then run hookrun vercel again.`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new ConfigError(`${displayPath(file)} must hold a JSON object.`);
  return parsed as Record<string, unknown>;
}

/** What to say when vercel.json would get the drain route alone: run from the wrong folder, or no job given a schedule. */
function nothingScheduled(config: Config, scheduled: number): string[] {
  if (!existsSync(config.platformConfigPath))
    return [
      `no ${displayPath(config.platformConfigPath)}, so vercel.json gets the drain route only. Run hookrun vercel in the project folder, or name it: --project <dir>, HOOKRUN_PROJECT, or "hookrun": { "project": "<dir>" } in package.json.`,
    ];
  if (scheduled === 0)
    return [`${displayPath(config.platformConfigPath)} schedules no job, so vercel.json gets the drain route only: give a job a "schedule" in its crons.`];
  return [];
}

/**
 * `hookrun vercel`: write the `crons` (or `schedules`) of vercel.json from
 * platform.json, plus the drain route every minute, for hookrun mounted in a
 * Next.js app (`hookrun/next`). platform.json stays the one place schedules
 * are written; this derives Vercel's copy of them.
 */
export function registerVercelCommand(program: Command): void {
  program
    .command('vercel')
    .description("write vercel.json's crons from platform.json, plus hookrun's drain route (for hookrun mounted in Next.js)")
    .option('--base-path <path>', 'where the catch-all route is mounted: /api for app/api/[...hookrun]/route.ts', '/api')
    .option('--file <path>', 'the vercel.json to update (other keys and crons are kept)', 'vercel.json')
    .option('--drain-schedule <cron>', "how often Vercel calls the drain route (Vercel's Hobby plan allows daily crons only)", '* * * * *')
    .option('--schedules', 'write Vercel Schedules (which take a time zone) instead of Cron Jobs (UTC only)')
    .option('--print', 'print the new vercel.json instead of writing it')
    .action(async (options: { basePath: string; file: string; drainSchedule: string; schedules?: boolean; print?: boolean }) => {
      const config = loadCliConfig();
      const { scheduled, warnings } = await scheduledJobs(config);
      const entries = vercelEntries(scheduled, { basePath: options.basePath, drainSchedule: options.drainSchedule, schedules: options.schedules === true });
      const file = resolve(cliIo().cwd, options.file);
      const merged = mergeVercelJson(readVercelJson(file), entries, options.basePath);
      for (const warning of [...warnings, ...nothingScheduled(config, scheduled.length)]) warn(`hookrun: ${warning}\n`);
      if (options.print) return printJson(merged);
      writeFileSync(file, JSON.stringify(merged, null, 2) + '\n');
      const count = entries.crons?.length ?? Object.keys(entries.schedules ?? {}).length;
      say(
        `${displayPath(file)}: ${count} ${options.schedules ? 'schedules' : 'crons'} (${scheduled.length} from ${displayPath(config.platformConfigPath)}, and the drain route). Vercel sends CRON_SECRET as the bearer: set it in the project's environment.\n`,
      );
    });
}
