import type { Command } from 'commander';
import { loadConfig, type Config } from '../config.js';
import { EventWriter } from '../db/event-writer.js';
import { ConfigError } from '../errors.js';
import { parseReconcileSince, reconcilePayments, type ReconcileSummary } from '../payments-api/reconcile.js';
import { createStripeApi } from '../payments-api/stripe-client.js';
import { withAdminClient } from './admin-client.js';
import { embeddedHolderPid, openCliDatabase } from './local-database.js';
import { adminAction, EXIT_CODES, printJson } from './output.js';

/** Counts on one line of stderr, redrawn in place on a terminal; silent in pipes and CI logs. */
function progressLine(): { update(counts: { found: number; added: number }): void; finish(): void } {
  const tty = process.stderr.isTTY === true;
  let drawn = false;
  return {
    update({ found, added }) {
      if (!tty) return;
      drawn = true;
      process.stderr.write(`\rreconciling: ${found} listed by Stripe, ${added} new`);
    },
    finish: () => void (drawn && process.stderr.write('\n')),
  };
}

/** Run the reconcile here: PostgreSQL (shared with a running server), or an embedded DATA_DIR no server holds. */
async function reconcileHere(config: Config, since: Date): Promise<ReconcileSummary> {
  const db = await openCliDatabase(config);
  const progress = progressLine();
  try {
    return await reconcilePayments({ api: createStripeApi(config.stripe!), writer: new EventWriter(db), since, onProgress: progress.update });
  } finally {
    progress.finish();
    await db.close();
  }
}

function printSummary(summary: ReconcileSummary): void {
  const lines = [
    `Stripe events since ${summary.since}: ${summary.found} found, ${summary.added} new (stored now, the worker processes them), ${summary.alreadyStored} already stored.`,
    ...summary.addedIds.map((id) => `  + ${id}`),
  ];
  if (summary.added > summary.addedIds.length) lines.push(`  … and ${summary.added - summary.addedIds.length} more`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** `hookrun reconcile payments --since 3d`: recover the events Stripe sent while hookrun was down past its retries. */
export function registerReconcileCommand(program: Command): void {
  program
    .command('reconcile')
    .description('store the events a provider sent while hookrun could not receive them (Stripe: up to 30 days back)')
    .argument('<source>', 'payments (Stripe)')
    .requiredOption('--since <when>', 'a duration back from now (90m, 12h, 3d, 1w) or an ISO date (2026-11-20)')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      '\nExamples:\n  hookrun reconcile payments --since 3d\n  hookrun reconcile payments --since 2026-11-20T08:00:00Z --json\n\nNeeds STRIPE_SECRET_KEY. Running it twice adds nothing. Exit codes: 0 done, 1 failed, 2 usage, 78 config.',
    )
    .action(
      adminAction(async (source: string, flags: { since: string; json?: boolean }, command: Command) => {
        if (source !== 'payments') command.error(`hookrun reconcile knows "payments" (Stripe's events API), not "${source}".`, { exitCode: EXIT_CODES.usage });
        let since: Date;
        try {
          since = parseReconcileSince(flags.since, Date.now());
        } catch (error) {
          return command.error((error as Error).message, { exitCode: EXIT_CODES.usage });
        }
        const config = loadConfig();
        if (!config.stripe)
          throw new ConfigError(
            'STRIPE_SECRET_KEY is not set: hookrun needs a Stripe secret or restricted key (read access to events) to list what was missed.',
          );
        const summary =
          embeddedHolderPid(config) === undefined
            ? await reconcileHere(config, since)
            : await withAdminClient(config, (client) => client.request<ReconcileSummary>('POST', '/payments/reconcile', { since: since.toISOString() }));
        if (flags.json) printJson(summary);
        else printSummary(summary);
      }),
    );
}
