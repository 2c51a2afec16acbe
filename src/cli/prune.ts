import type { Command } from 'commander';
import { type Config } from '../config/config.js';
import { prune, type PruneReport } from '../retention/prune.js';
import { withAdminClient } from './admin-client.js';
import { embeddedHolderPid, openCliDatabase } from './local-database.js';
import { adminAction, printJson, say } from './output.js';
import { loadCliConfig } from './io.js';

/** Run the pass here: PostgreSQL (shared with running servers), or an embedded DATA_DIR no server holds. */
async function pruneHere(config: Config, dryRun: boolean): Promise<PruneReport> {
  const db = await openCliDatabase(config);
  try {
    return await prune(db, config.retention, Date.now(), { dryRun });
  } finally {
    await db.close();
  }
}

function describe(report: PruneReport, days: Config['retention']): string {
  const verb = report.dryRun ? 'would delete' : 'deleted';
  const line = (count: number, what: string, setting: string, value: number, cutoff: string | undefined) =>
    cutoff ? `  ${count} ${what} older than ${value} days (${setting}, before ${cutoff})` : `  ${what}: kept forever (${setting}=0)`;
  return [
    `hookrun prune ${verb}:`,
    line(report.events, 'finished events', 'EVENT_RETENTION_DAYS', days.events, report.cutoffs.events),
    line(report.dedupeKeys, 'dedupe keys of deleted events', 'DEDUPE_RETENTION_DAYS', days.dedupeKeys, report.cutoffs.dedupeKeys),
    line(report.cronRuns, 'cron runs', 'CRON_RUN_RETENTION_DAYS', days.cronRuns, report.cutoffs.cronRuns),
    line(report.auditEntries, 'audit entries', 'AUDIT_RETENTION_DAYS', days.audit ?? 0, report.cutoffs.auditEntries),
    ...(report.dryRun ? ['Nothing was deleted. Run without --dry-run to delete (a running hookrun also does it every hour).'] : []),
  ].join('\n');
}

/** `hookrun prune --dry-run`: see (or apply now) what retention deletes every hour. */
export function registerPruneCommand(program: Command): void {
  program
    .command('prune')
    .description('delete what retention keeps no longer: finished events, their dedupe keys, cron runs, audit entries (a running hookrun does it every hour)')
    .option('--dry-run', 'only count what would be deleted')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      '\nExamples:\n  hookrun prune --dry-run\n  EVENT_RETENTION_DAYS=7 hookrun prune --json\n\nPending and failed events are never deleted. Exit codes: 0 done, 1 failed, 78 config.',
    )
    .action(
      adminAction(async (flags: { dryRun?: boolean; json?: boolean }) => {
        const config = loadCliConfig();
        const dryRun = flags.dryRun === true;
        const report =
          embeddedHolderPid(config) === undefined
            ? await pruneHere(config, dryRun)
            : await withAdminClient(config, (client) => client.request<PruneReport>('POST', '/retention/prune', { dryRun }));
        if (flags.json) printJson(report);
        else say(`${describe(report, config.retention)}\n`);
      }),
    );
}
