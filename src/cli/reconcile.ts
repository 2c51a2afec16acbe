import type { Command } from 'commander';
import { type Config } from '../config/config.js';
import { EventWriter } from '../db/event-writer.js';
import { ConfigError } from '../errors.js';
import { parseReconcileSince, reconcilePayments, type ReconcileSummary } from '../payments-api/reconcile.js';
import { createStripeApi } from '../payments-api/stripe-client.js';
import { withAdminClient } from './admin-client.js';
import { embeddedHolderPid, openCliDatabase } from './local-database.js';
import { adminAction, EXIT_CODES, printJson } from './output.js';
import { printSummary, progressLine, reconcileSender } from './reconcile-senders.js';
import { isReconcileSender, RECONCILE_SENDERS } from '../reconcile/senders.js';
import { loadCliConfig } from './io.js';

/** Run the reconcile here: PostgreSQL (shared with a running server), or an embedded DATA_DIR no server holds. */
async function reconcileHere(config: Config, since: Date): Promise<ReconcileSummary> {
  const db = await openCliDatabase(config);
  const progress = progressLine('Stripe');
  try {
    return await reconcilePayments({ api: createStripeApi(config.stripe!), writer: new EventWriter(db), since, onProgress: progress.update });
  } finally {
    progress.finish();
    await db.close();
  }
}

/**
 * `hookrun reconcile <sender> --since 3d`: recover what a sender sent while hookrun was down past its retries
 * (Stripe, Paddle, WorkOS: stored from their events APIs; GitHub: redelivered; Clerk: users and organizations listed).
 */
export function registerReconcileCommand(program: Command): void {
  program
    .command('reconcile')
    .description('store the events a sender sent while hookrun could not receive them (gap repair from its API)')
    .argument('<source>', `payments (Stripe), ${RECONCILE_SENDERS.join(', ')}`)
    .requiredOption('--since <when>', 'a duration back from now (90m, 12h, 3d, 1w) or an ISO date (2026-11-20)')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      [
        '\nExamples:\n  hookrun reconcile payments --since 3d\n  hookrun reconcile payments --since 2026-11-20T08:00:00Z --json\n  hookrun reconcile github --since 12h',
        '\nNeeds: payments STRIPE_SECRET_KEY (30 days back at most); github GITHUB_TOKEN and GITHUB_HOOK (3 days);',
        'paddle PADDLE_API_KEY and PAYMENTS_PROVIDER=paddle (90 days); workos WORKOS_API_KEY and AUTH_PROVIDER=workos (30 days);',
        'clerk CLERK_SECRET_KEY (users and organizations changed since then, stored as user.updated / organization.updated).',
        'Running it twice adds nothing. Exit codes: 0 done, 1 failed, 2 usage, 78 config.',
      ].join('\n'),
    )
    .action(
      adminAction(async (source: string, flags: { since: string; json?: boolean }, command: Command) => {
        if (isReconcileSender(source)) return reconcileSender(source, flags, command);
        if (source !== 'payments')
          command.error(`hookrun reconcile knows payments (Stripe), ${RECONCILE_SENDERS.join(', ')}, not "${source}".`, { exitCode: EXIT_CODES.usage });
        let since: Date;
        try {
          since = parseReconcileSince(flags.since, Date.now());
        } catch (error) {
          return command.error((error as Error).message, { exitCode: EXIT_CODES.usage });
        }
        const config = loadCliConfig();
        if (!config.stripe)
          throw new ConfigError(
            'STRIPE_SECRET_KEY is not set: hookrun needs a Stripe secret or restricted key (read access to events) to list what was missed.',
          );
        const summary =
          embeddedHolderPid(config) === undefined
            ? await reconcileHere(config, since)
            : await withAdminClient(config, (client) => client.request<ReconcileSummary>('POST', '/payments/reconcile', { since: since.toISOString() }));
        if (flags.json) printJson(summary);
        else printSummary(summary, { title: 'Stripe', found: 'events', added: 'new (stored now, the worker processes them)' });
      }),
    );
}
