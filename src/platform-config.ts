import { readFileSync } from 'node:fs';
import { ConfigError } from './errors.js';

/** One entry of platform.json `crons`, as written (validated by cron/schedule.ts). */
export interface CronEntry {
  path: string;
  schedule: string;
}

/** Parse the `crons` array of platform.json; shape only, the cron module checks jobs and expressions. */
export function readPlatformConfig(path: string): CronEntry[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new ConfigError(`${path}: cannot be read (${(error as Error).message}).`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${path}: is not valid JSON (${(error as Error).message}). Fix the file or point PLATFORM_CONFIG at another.`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(`${path}: must be a JSON object like { "crons": [ { "path": "/cron/keep-alive", "schedule": "0 1 * * *" } ] }.`);
  }
  const crons = (parsed as { crons?: unknown }).crons;
  if (crons === undefined) return [];
  if (!Array.isArray(crons)) throw new ConfigError(`${path} crons: must be an array of { "path", "schedule" } entries.`);
  return crons.map((entry: unknown, index) => {
    const where = `${path} crons[${index}]`;
    if (typeof entry !== 'object' || entry === null) throw new ConfigError(`${where}: must be an object with "path" and "schedule".`);
    const { path: cronPath, schedule } = entry as Record<string, unknown>;
    if (typeof cronPath !== 'string' || cronPath === '') throw new ConfigError(`${where}.path: must be a string like "/cron/keep-alive".`);
    if (typeof schedule !== 'string' || schedule.trim() === '') throw new ConfigError(`${where}.schedule: must be a cron expression string like "0 1 * * *".`);
    return { path: cronPath, schedule };
  });
}
