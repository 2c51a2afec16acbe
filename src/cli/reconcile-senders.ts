import type { Command } from 'commander';
import { type Config } from '../config/config.js';
import { EventWriter } from '../db/event-writer.js';
import { SenderApiError } from '../reconcile/sender-api.js';
import { parseSenderSince, SENDER_RECONCILES, type ReconcileSender } from '../reconcile/senders.js';
import type { ReconcileSummary } from '../reconcile/summary.js';
import { withAdminClient } from './admin-client.js';
import { embeddedHolderPid, openCliDatabase } from './local-database.js';
import { EXIT_CODES, printJson, say, warn } from './output.js';
import { writeErr, setExitCode, loadCliConfig, cliIo } from './io.js';

/** Counts on one line of stderr, redrawn in place on a terminal; silent in pipes and CI logs. */
export function progressLine(listedBy: string): { update(counts: { found: number; added: number }): void; finish(): void } {
  const tty = cliIo().stderrIsTTY;
  let drawn = false;
  return {
    update({ found, added }) {
      if (!tty) return;
      drawn = true;
      writeErr(`\rreconciling: ${found} listed by ${listedBy}, ${added} new`);
    },
    finish: () => void (drawn && writeErr('\n')),
  };
}

/** The summary for people: one line of counts, then the added keys (at most 100). */
export function printSummary(summary: ReconcileSummary, what: { title: string; found: string; added: string }): void {
  const lines = [
    `${what.title} ${what.found} since ${summary.since}: ${summary.found} found, ${summary.added} ${what.added}, ${summary.alreadyStored} already stored.`,
    ...summary.addedIds.map((id) => `  + ${id}`),
  ];
  if (summary.added > summary.addedIds.length) lines.push(`  … and ${summary.added - summary.addedIds.length} more`);
  say(`${lines.join('\n')}\n`);
}

async function reconcileHere(config: Config, sender: ReconcileSender, since: Date): Promise<ReconcileSummary> {
  const db = await openCliDatabase(config);
  const progress = progressLine(SENDER_RECONCILES[sender].title);
  try {
    return await SENDER_RECONCILES[sender].run({ config, db, writer: new EventWriter(db), since, onProgress: progress.update });
  } finally {
    progress.finish();
    await db.close();
  }
}

/**
 * `hookrun reconcile github|paddle|workos|clerk --since …`: here (PostgreSQL,
 * or an embedded DATA_DIR no server holds), or through the server that holds
 * DATA_DIR. A missing key throws a ConfigError (exit 78) before anything is
 * opened; the sender API's refusal is printed with its own message (exit 1).
 */
export async function reconcileSender(sender: ReconcileSender, flags: { since: string; json?: boolean }, command: Command): Promise<void> {
  let since: Date;
  try {
    since = parseSenderSince(sender, flags.since, Date.now());
  } catch (error) {
    return command.error((error as Error).message, { exitCode: EXIT_CODES.usage });
  }
  const config = loadCliConfig();
  const reconcile = SENDER_RECONCILES[sender];
  reconcile.check(config);
  let summary: ReconcileSummary;
  try {
    summary =
      embeddedHolderPid(config) === undefined
        ? await reconcileHere(config, sender, since)
        : await withAdminClient(config, (client) => client.request<ReconcileSummary>('POST', `/reconcile/${sender}`, { since: since.toISOString() }));
  } catch (error) {
    if (!(error instanceof SenderApiError)) throw error;
    warn(`hookrun: ${error.message}\nRun it again once the API answers: what is already stored is skipped.\n`);
    setExitCode(EXIT_CODES.failure);
    return;
  }
  if (flags.json) printJson(summary);
  else printSummary(summary, reconcile);
}
