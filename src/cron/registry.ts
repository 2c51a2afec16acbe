import { existsSync } from 'node:fs';
import { extname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ConfigError, messageOf } from '../errors.js';
import { displayPath, importDefault, listModuleFiles, PROJECT_EXTENSIONS } from '../module-files.js';
import { defineJob, type JobDefinition } from './job.js';

/** Jobs by name; the name is the file name and the route `/cron/<name>`. */
export type JobRegistry = ReadonlyMap<string, JobDefinition>;

/** Where job files live: `src/cron/jobs` under tsx/vitest, `dist/cron/jobs` when compiled. */
export const JOBS_DIR = new URL('./jobs/', import.meta.url);

/** The 404 of every way to run a job (route, runner, service, admin API): names the jobs and how to add one. */
export function unknownJobMessage(job: string, jobs: JobRegistry): string {
  return `No cron job "${job}". Jobs: ${[...jobs.keys()].join(', ') || 'none'}. A job is a file jobs/<name>.ts in your project.`;
}

/** A job name is a URL path segment: lowercase letters, digits and dashes. */
export const JOB_NAME = /^[a-z0-9][a-z0-9-]*$/;

/** This module's own extension (.ts from source, .js compiled), so we load job files of the same kind. */
const OWN_EXTENSION = extname(fileURLToPath(import.meta.url));

/**
 * Why a job the config names has no file here, when the cause is a build:
 * hookrun runs from `dist/`, and `src/cron/jobs/<job>.ts` exists but was not
 * compiled. Undefined when there is no such source file either.
 */
export function unbuiltJobHint(job: string, dir: URL = JOBS_DIR, runningFrom: string = OWN_EXTENSION): string | undefined {
  if (runningFrom !== '.js') return undefined; // running from source (tsx, npm run dev): nothing to build
  const source = new URL(`../../../src/cron/jobs/${job}.ts`, dir);
  if (!existsSync(source)) return undefined;
  return `${displayPath(source)} exists but is not built yet: run \`npm run build\` (and restart a running hookrun), or use \`npm run dev\`, which runs the source`;
}

/**
 * Discover jobs at run time: every file in `dir` is a job, so adding a job is
 * adding a file, with no list to keep in step. Works from `src/*.ts` and from compiled `dist/*.js`;
 * declaration and source-map files are ignored. A file that does not
 * default-export a job stops start-up with a message naming the file.
 */
export async function loadJobs(dir: URL = JOBS_DIR, extensions: readonly string[] = [OWN_EXTENSION]): Promise<JobRegistry> {
  const jobs = new Map<string, JobDefinition>();
  for (const { url, name, file } of listModuleFiles(dir, extensions) ?? []) {
    const where = displayPath(url);
    if (!JOB_NAME.test(name)) {
      throw new ConfigError(
        `${where}: a job file name becomes its route /cron/<name>; rename it to lowercase letters, digits and dashes (e.g. keep-alive${extname(file)}).`,
      );
    }
    if (jobs.has(name)) throw new ConfigError(`${where}: a second file for job "${name}"; keep one.`);
    let exported: unknown;
    try {
      exported = await importDefault(url);
    } catch (error) {
      throw new ConfigError(`${where}: cannot be loaded (${messageOf(error)}).`);
    }
    try {
      jobs.set(name, defineJob(exported as JobDefinition));
    } catch (error) {
      throw new ConfigError(`${where}: must \`export default defineJob({ run })\` (${messageOf(error)}).`);
    }
  }
  return jobs;
}

/**
 * The jobs a running hookrun serves: the shipped ones (`keep-alive`,
 * `reconcile-payments`) and the project's `jobs/` files (TypeScript or
 * JavaScript), a project's job replacing a shipped one of the same name.
 */
export async function loadAllJobs(projectDir: string): Promise<JobRegistry> {
  const shipped = await loadJobs();
  const own = new URL('jobs/', pathToFileURL(`${projectDir}/`));
  if (own.href === JOBS_DIR.href) return shipped;
  return new Map([...shipped, ...(await loadJobs(own, PROJECT_EXTENSIONS))]);
}
