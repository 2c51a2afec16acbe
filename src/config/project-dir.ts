import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { ConfigError } from '../errors.js';
import { loadDotEnvFile } from './dot-env.js';
import type { Env } from './values.js';

/** The folder docs/deploy.md puts the project in inside a Next.js app: `hookrun/` beside `app/`. */
export const APP_PROJECT_FOLDER = 'hookrun';

/** What makes a folder a hookrun project: any of these in it. */
const PROJECT_ENTRIES = ['jobs', 'handlers', 'platform.json'];

const looksLikeProject = (dir: string) => PROJECT_ENTRIES.some((entry) => existsSync(join(dir, entry)));

/** The nearest package.json at or above `dir`, or undefined at the file system's root. */
function nearestPackageJson(dir: string): string | undefined {
  for (let at = dir; ; at = dirname(at)) {
    if (existsSync(join(at, 'package.json'))) return join(at, 'package.json');
    if (dirname(at) === at) return undefined;
  }
}

/** `"hookrun": { "project": "<dir>" }` of the nearest package.json, resolved from that file's folder; undefined without the key. */
function packageJsonProject(cwd: string): string | undefined {
  const file = nearestPackageJson(cwd);
  if (file === undefined) return undefined;
  let pkg: unknown;
  try {
    pkg = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined; // not ours to judge: npm says what is wrong with it
  }
  const own = (pkg as { hookrun?: unknown } | null)?.hookrun;
  if (own === undefined) return undefined;
  const project = (own as { project?: unknown } | null)?.project;
  if (typeof project !== 'string' || project.trim() === '')
    throw new ConfigError(`${file}: "hookrun" must be { "project": "<folder>" }, the folder of your jobs/, handlers/ and platform.json (like "hookrun").`);
  const dir = resolve(dirname(file), project);
  if (!existsSync(dir))
    throw new ConfigError(
      `${file}: "hookrun": { "project": "${project}" } names ${dir}, which does not exist: create it (npx hookrun init ${project}) or fix the key.`,
    );
  return dir;
}

/**
 * The project folder (its `jobs/`, `handlers/`, platform.json and `.env`), the
 * first of: HOOKRUN_PROJECT (which `--project` sets), `"hookrun": { "project" }`
 * in the nearest package.json, `./hookrun/` when it holds a project and the
 * working directory does not (a Next.js app's layout, docs/deploy.md), else
 * the working directory. One rule, so the CLI run from the app's root and
 * the mounted route find the same project (docs/cli.md).
 */
export function resolveProjectDir(env: Env, cwd: string): string {
  if (env.HOOKRUN_PROJECT) return resolve(cwd, env.HOOKRUN_PROJECT);
  const declared = packageJsonProject(cwd);
  if (declared !== undefined) return declared;
  const beside = join(cwd, APP_PROJECT_FOLDER);
  if (!looksLikeProject(cwd) && looksLikeProject(beside)) return resolve(beside);
  return resolve(cwd);
}

/**
 * `--project <dir>`: the project to use from now on, as HOOKRUN_PROJECT in the
 * environment, so `loadConfig` and child processes (`dev`'s) see it; then the
 * project's `.env` (wherever resolveProjectDir finds it) and the working
 * directory's are read (`loadDotEnvFile`); into `env`, the process's unless an
 * in-process CLI run hands its own.
 */
export function useProjectDir(dir: string | undefined, env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): void {
  if (dir !== undefined) env.HOOKRUN_PROJECT = resolve(cwd, dir);
  const projectDir = projectDirIfValid(env, cwd);
  if (projectDir !== undefined && projectDir !== resolve(cwd)) loadDotEnvFile(projectDir, env);
  loadDotEnvFile(cwd, env);
}

/** The project folder, or undefined when package.json names it wrongly: `loadConfig` says so, and `hookrun init` may be what makes it. */
function projectDirIfValid(env: Env, cwd: string): string | undefined {
  try {
    return resolveProjectDir(env, cwd);
  } catch (error) {
    if (error instanceof ConfigError) return undefined;
    throw error;
  }
}
