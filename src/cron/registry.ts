import { existsSync } from 'node:fs';
import { extname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ConfigError, messageOf } from '../errors.js';
import { displayPath, importDefault, listModuleFiles, PROJECT_EXTENSIONS } from '../module-files.js';
import { resolveJob, type EngineJobSpec, type ResolvedJob } from './job.js';
import { projectJob } from './project-job.js';

/** Jobs by name; the name is the file name and the route `/cron/<name>`. */
export type JobRegistry = ReadonlyMap<string, ResolvedJob>;

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

/** One job file's default export as the runner takes it, or a ConfigError naming the file (`where`). */
type ToJob = (exported: unknown, where: string) => ResolvedJob;

/** Every job file in `dir`, by name: a name that cannot be a route, two files of one name or a file that cannot load stops start-up naming the file. */
async function loadJobFiles(dir: URL, extensions: readonly string[], toJob: ToJob): Promise<Map<string, ResolvedJob>> {
  const jobs = new Map<string, ResolvedJob>();
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
    jobs.set(name, toJob(exported, where));
  }
  return jobs;
}

/** A shipped job file's export: an `EngineJobSpec`, its policies decided. */
const shippedJob: ToJob = (exported, where) => {
  try {
    return resolveJob(exported as EngineJobSpec);
  } catch (error) {
    throw new ConfigError(`${where}: must \`export default { run(ctx) { … } } satisfies EngineJobSpec\` (${messageOf(error)}).`);
  }
};

/**
 * Discover hookrun's own jobs at run time: every file in `dir` is a job, so
 * adding a job is adding a file, with no list to keep in step. Works from
 * `src/*.ts` and from compiled `dist/*.js`; declaration and source-map files
 * are ignored. They run with the engine's context (`EngineJobContext`).
 */
export function loadJobs(dir: URL = JOBS_DIR, extensions: readonly string[] = [OWN_EXTENSION]): Promise<JobRegistry> {
  return loadJobFiles(dir, extensions, shippedJob);
}

/**
 * The jobs a running hookrun serves: the shipped ones (`keep-alive`, the
 * `reconcile-*` jobs) and the project's `jobs/` files (TypeScript or
 * JavaScript, each `export default defineJob(…)` and run with the public
 * `JobContext`), a project's job replacing a shipped one of the same name.
 * With `env` (what a running hookrun passes), a setting a project job names
 * and `env` lacks stops start-up naming the file; without it (listing jobs
 * only) a run of that job fails saying the same.
 */
export async function loadAllJobs(projectDir: string, env?: Readonly<Record<string, string | undefined>>): Promise<JobRegistry> {
  const shipped = await loadJobs();
  const own = new URL('jobs/', pathToFileURL(`${projectDir}/`));
  if (own.href === JOBS_DIR.href) return shipped;
  const project = await loadJobFiles(own, PROJECT_EXTENSIONS, (exported, where) => projectJob(exported, where, env));
  return new Map([...shipped, ...project]);
}
