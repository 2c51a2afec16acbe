import type { Command } from 'commander';
import type { BackfillPlan, PauseState } from '../cron/controls.js';
import type { CronRunRow } from '../cron/runs-sql.js';
import { withAdminClient } from './admin-client.js';
import { adminAction, EXIT_CODES, instantOption, printJson, say, shortTime } from './output.js';
import { setExitCode, loadCliConfig } from './io.js';

/** `keep-alive` or `/cron/keep-alive`: the job's name. */
const jobName = (arg: string) => arg.replace(/^\/?cron\//, '');
const jobPath = (job: string) => `/cron/jobs/${encodeURIComponent(job)}`;

/** `hookrun cron pause|resume|backfill`: stop a job without a redeploy, and run a past range of its ticks. */
export function registerCronControls(cron: Command): void {
  cron
    .command('pause')
    .description('pause a job on every instance: its scheduled ticks are recorded skipped until resumed (manual runs still run)')
    .argument('<job>', 'job name')
    .option('--json', 'print JSON')
    .action(
      adminAction(async (jobArg: string, flags: { json?: boolean }) => {
        const job = jobName(jobArg);
        const state = await withAdminClient(loadCliConfig(), (client) => client.request<PauseState>('POST', `${jobPath(job)}/pause`, {}));
        if (flags.json) return printJson(state);
        say(
          `${job} ${state.changed ? 'paused' : 'was already paused'}: its scheduled ticks are skipped on every instance until \`hookrun cron resume ${job}\`.\n`,
        );
      }),
    );

  cron
    .command('resume')
    .description('resume a paused job; the ticks skipped while paused do not run unless --catch-up')
    .argument('<job>', 'job name')
    .option('--catch-up', "also run the ticks skipped while paused (by the job's catch-up policy)")
    .option('--json', 'print JSON')
    .action(
      adminAction(async (jobArg: string, flags: { catchUp?: boolean; json?: boolean }) => {
        const job = jobName(jobArg);
        const state = await withAdminClient(loadCliConfig(), (client) =>
          client.request<PauseState>('POST', `${jobPath(job)}/resume`, { catchUp: flags.catchUp === true }),
        );
        if (flags.json) return printJson(state);
        if (!state.changed) return void say(`${job} was not paused.\n`);
        say(`${job} resumed${state.caughtUp !== undefined ? `; ${state.caughtUp} tick(s) skipped while paused will run now` : ''}.\n`);
      }),
    );

  cron
    .command('backfill')
    .description('run the ticks of a past range that have no run yet, each once, oldest first')
    .argument('<job>', 'job name')
    .requiredOption('--from <date>', 'first tick time (2026-11-20 or 2026-11-20T08:00:00Z; without an offset, UTC)', instantOption('--from'))
    .requiredOption('--to <date>', 'last tick time (without an offset, UTC), not in the future', instantOption('--to'))
    .option('--dry-run', 'only list the ticks and which already have a run')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      '\nExamples:\n  hookrun cron backfill nightly-report --from 2026-11-01 --to 2026-11-07 --dry-run\n  hookrun cron backfill nightly-report --from 2026-11-01 --to 2026-11-07\n\nWith a running server the runs are queued for its scheduler; otherwise they run here.',
    )
    .action(
      adminAction(async (jobArg: string, flags: { from: string; to: string; dryRun?: boolean; json?: boolean }) => {
        const job = jobName(jobArg);
        const result = await withAdminClient(loadCliConfig(), async (client) => {
          const plan = await client.request<BackfillPlan>('POST', `${jobPath(job)}/backfill`, {
            from: flags.from,
            to: flags.to,
            dryRun: flags.dryRun === true,
          });
          if (plan.dryRun || plan.queued === 0 || !client.drainDue) return { plan, runs: undefined };
          await client.drainDue(job);
          const { runs } = await client.request<{ runs: CronRunRow[] }>('GET', `/cron/runs?job=${encodeURIComponent(job)}&limit=200`);
          const wanted = new Set(plan.ticks.filter((t) => !t.hasRun).map((t) => t.at));
          return { plan, runs: runs.filter((r) => r.scheduledFor && wanted.has(new Date(r.scheduledFor).toISOString())) };
        });
        if (flags.json) return printJson(result);
        const { plan, runs } = result;
        const lines = plan.ticks.map((t) => `  ${shortTime(t.at)}  ${t.hasRun ? 'has a run already: left alone' : plan.dryRun ? 'would run' : 'queued'}`);
        say(`${job}: ${plan.ticks.length} tick(s) from ${shortTime(plan.from)} to ${shortTime(plan.to)}\n${lines.join('\n')}\n`);
        if (plan.dryRun) say(`Nothing was run. Without --dry-run, ${plan.ticks.filter((t) => !t.hasRun).length} tick(s) run, oldest first.\n`);
        else if (runs) {
          const ran = runs.filter((r) => r.status !== 'pending');
          const failed = ran.filter((r) => r.status !== 'succeeded');
          say(`Ran ${ran.length} tick(s) here: ${ran.length - failed.length} succeeded, ${failed.length} did not.\n`);
          if (ran.length < runs.length)
            say(
              `${runs.length - ran.length} tick(s) wait as pending (the job is paused, or its limits hold them): a server's scheduler runs them once it may (after \`hookrun cron resume ${job}\` if paused).\n`,
            );
          if (failed.length > 0) setExitCode(EXIT_CODES.failure);
        } else say(`${plan.queued} tick(s) queued: the running server's scheduler runs them, oldest first (hookrun cron list shows them).\n`);
      }),
    );
}
