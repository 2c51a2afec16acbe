import type { Command } from 'commander';
import { type Config } from '../config/config.js';
import { loadAllJobs, unbuiltJobHint } from '../cron/registry.js';
import { displayPath } from '../module-files.js';
import { withHttpTargets } from '../cron/http-target.js';
import { validateCrons, type ScheduledJob } from '../cron/schedule.js';
import { tickInZone } from '../cron/time-zone.js';
import { registerCronControls } from './cron-controls.js';
import type { CronRunResult } from '../cron/runner-deps.js';
import type { CronRunRow } from '../cron/runs-sql.js';
import { AdminRequestError, withAdminClient } from './admin-client.js';
import { adminAction, EXIT_CODES, positiveInt, printJson, printListing, say, shortTime, warn } from './output.js';
import { setExitCode, loadCliConfig } from './io.js';

/**
 * Jobs and their platform.json schedules, without touching the database (for
 * `check` and `cron next`); given `env`, a job's `env` settings must be set in
 * it, as `hookrun start` requires.
 */
export async function scheduledJobs(
  config: Config,
  env?: Readonly<Record<string, string | undefined>>,
): Promise<{ jobs: string[]; scheduled: ScheduledJob[]; warnings: string[] }> {
  const registry = withHttpTargets(await loadAllJobs(config.projectDir, env), config);
  const jobs = [...registry.keys()].sort();
  return { jobs, ...validateCrons(config.crons, registry, displayPath(config.platformConfigPath)) };
}

/** `keep-alive` or `/cron/keep-alive` (the form `cron list` prints): the job's name. */
const jobName = (arg: string) => arg.replace(/^\/?cron\//, '');

/**
 * A 404 for a job whose file exists says why: the file is not built yet, or
 * the running server started before it was (it loads jobs at start-up).
 */
export async function explainUnknownJob(error: unknown, job: string, mode: 'local' | 'remote'): Promise<unknown> {
  if (!(error instanceof AdminRequestError) || error.status !== 404) return error;
  const unbuilt = unbuiltJobHint(job);
  if (unbuilt) return new AdminRequestError(404, error.code, `${error.message} ${unbuilt}.`);
  if (mode === 'remote' && (await loadAllJobs(loadCliConfig().projectDir)).has(job)) {
    return new AdminRequestError(
      404,
      error.code,
      `${error.message} This build has dist/cron/jobs/${job}.js, but the running hookrun loaded its jobs before it was built: restart the server.`,
    );
  }
  return error;
}

/** A job as the admin API answers it (dates as ISO strings). */
interface JobJson {
  name: string;
  path: string;
  schedule: string | null;
  timezone: string;
  nextRuns: string[];
  attempts: number;
  pausedAt: string | null;
  lastRun: { id: number; trigger: string; status: string; startedAt: string; error: string | null; attempt: number } | null;
}

/** `hookrun cron list|next|run`: see when jobs run, and run one now. */
export function registerCronCommands(program: Command): void {
  const cron = program.command('cron').description('list cron jobs, show their next runs (in their time zone and UTC), run one now');

  cron
    .command('list')
    .description('every job: schedule and its time zone, next run, last run and its status')
    .option('--json', 'print JSON')
    .action(
      adminAction(async (flags: { json?: boolean }) => {
        const { jobs } = await withAdminClient(loadCliConfig(), (client) => client.request<{ jobs: JobJson[] }>('GET', '/cron/jobs'));
        printListing(
          jobs,
          [
            { header: 'JOB', cell: (j) => j.path },
            { header: 'SCHEDULE', cell: (j) => (j.schedule ? `${j.schedule} (${j.timezone})` : 'not scheduled') },
            {
              header: 'NEXT RUN',
              cell: (j) => (j.pausedAt ? `paused since ${shortTime(j.pausedAt)}` : j.nextRuns[0] ? tickInZone(j.nextRuns[0], j.timezone) : '-'),
            },
            { header: 'LAST RUN', cell: (j) => shortTime(j.lastRun?.startedAt) },
            {
              header: 'STATUS',
              cell: (j) => (j.lastRun ? `${j.lastRun.status}${j.attempts > 1 ? ` (attempt ${j.lastRun.attempt}/${j.attempts})` : ''}` : '-'),
            },
            { header: 'TRIGGER', cell: (j) => j.lastRun?.trigger ?? '-' },
          ],
          { json: flags.json === true, jsonValue: jobs, empty: 'No cron jobs (add a file to src/cron/jobs/).' },
        );
      }),
    );

  cron
    .command('next')
    .description('the next N run times of a job, in its time zone and UTC (reads platform.json; no database needed)')
    .argument('<job>', 'job name, e.g. keep-alive')
    .option('-n, --count <n>', 'how many', positiveInt('--count', 1000), 5)
    .option('--json', 'print JSON')
    .action(async (jobArg: string, flags: { count: number; json?: boolean }) => {
      const job = jobName(jobArg);
      const config = loadCliConfig();
      const { jobs, scheduled } = await scheduledJobs(config);
      if (!jobs.includes(job)) {
        warn(`hookrun: no cron job "${job}". Jobs: ${jobs.join(', ') || 'none'}.\n`);
        setExitCode(EXIT_CODES.failure);
        return;
      }
      const entry = scheduled.find((s) => s.job === job);
      const runs = entry ? entry.schedule.nextRuns(flags.count, Date.now()).map((d) => d.toISOString()) : [];
      if (flags.json) return printJson({ job, schedule: entry?.schedule.expression ?? null, timezone: entry?.schedule.timezone ?? null, nextRuns: runs });
      if (!entry) {
        say(`${job} has no schedule in ${displayPath(config.platformConfigPath)}; it runs only when called (POST /cron/${job}, hookrun cron run ${job}).\n`);
        return;
      }
      say(
        `${job}  "${entry.schedule.expression}" (${entry.schedule.timezone})\n${runs.map((r) => `  ${tickInZone(r, entry.schedule.timezone)}`).join('\n')}\n`,
      );
    });

  registerCronControls(cron);

  cron
    .command('run')
    .description('run a job once now, in this process (recorded in cron_runs with trigger "cli")')
    .argument('<job>', 'job name, e.g. keep-alive')
    .option('--json', 'print the run as JSON')
    .addHelpText(
      'after',
      '\nExit codes: 0 succeeded, 1 failed / already running / unknown job, 78 config.\nWhen a server holds the embedded DATA_DIR, the run goes through its admin API (ADMIN_TOKEN).',
    )
    .action(
      adminAction(async (jobArg: string, flags: { json?: boolean }) => {
        const job = jobName(jobArg);
        const { run } = await withAdminClient(loadCliConfig(), (client) =>
          client.request<{ run: CronRunResult }>('POST', `/cron/jobs/${encodeURIComponent(job)}/run?trigger=cli`).catch(async (error: unknown) => {
            throw await explainUnknownJob(error, job, client.mode);
          }),
        );
        if (!flags.json && run.output) say(indented(run.output));
        if (flags.json) printJson(run);
        else if (run.status === 'succeeded') say(`${job} succeeded in ${run.durationMs} ms (run ${run.id})\n`);
        else if (run.status === 'queued')
          say(
            run.waiting
              ? `${job}: this run waits: ${run.waiting} (run ${run.id})\n`
              : `${job} is running; this run waits behind it and starts when it ends (overlap "queue-one", run ${run.id})\n`,
          );
        else say(`${job} ${run.status}: ${run.error ?? 'no message'} (run ${run.id})\n`);
        if (run.status !== 'succeeded' && run.status !== 'queued') setExitCode(EXIT_CODES.failure);
      }),
    );

  registerCronRunsCommand(cron);
}

/** A run's output under its summary line, each line indented. */
function indented(output: string): string {
  return `${output
    .split('\n')
    .map((line) => `  | ${line}`)
    .join('\n')}\n`;
}

/** `hookrun cron runs`: the run history, newest first. */
function registerCronRunsCommand(cron: Command): void {
  cron
    .command('runs')
    .description('recent runs, newest first, each with the last lines its job logged')
    .argument('[job]', 'only this job')
    .option('-n, --limit <n>', 'how many', positiveInt('--limit', 200), 10)
    .option('--json', 'print JSON')
    .action(
      adminAction(async (jobArg: string | undefined, flags: { limit: number; json?: boolean }) => {
        const query = new URLSearchParams({ limit: String(flags.limit), ...(jobArg ? { job: jobName(jobArg) } : {}) });
        const { runs } = await withAdminClient(loadCliConfig(), (client) => client.request<{ runs: CronRunRow[] }>('GET', `/cron/runs?${query}`));
        if (flags.json) return printJson(runs);
        if (runs.length === 0) return void say('No runs yet.\n');
        for (const run of runs) {
          const took = run.durationMs === null ? '' : ` in ${run.durationMs} ms`;
          say(`run ${run.id}  ${run.job}  ${run.trigger}  ${shortTime(String(run.startedAt))}  ${run.status}${took}${run.error ? `: ${run.error}` : ''}\n`);
          if (run.output) say(indented(run.output));
        }
      }),
    );
}
