import { listCronRuns } from './run-history-sql.js';
import { EventWriter } from '../db/event-writer.js';
import { SENDER_RECONCILES, type ReconcileSender } from '../reconcile/senders.js';
import type { EngineJobSpec } from './job.js';

const DAY_MS = 86_400_000;
/** Overlap with the previous successful run, so an event created as it ran is not missed. */
const OVERLAP_MS = 3_600_000;
/** Kept inside the sender API's limit: an item at its edge may age out between listing and acting on it (GitHub refuses an old redelivery). */
const EDGE_MS = 10 * 60_000;

/**
 * The window of a scheduled reconcile: since the last successful run (less an
 * hour of overlap), at least the sender's own retry window back, never older
 * than its API serves.
 */
export function reconcileWindowStart(sender: ReconcileSender, nowMs: number, lastSuccessMs: number | undefined): Date {
  const { jobWindowDays, maxDays } = SENDER_RECONCILES[sender];
  const minWindowStart = nowMs - jobWindowDays * DAY_MS;
  const fromLast = lastSuccessMs === undefined ? minWindowStart : Math.min(minWindowStart, lastSuccessMs - OVERLAP_MS);
  const floor = maxDays === undefined ? -Infinity : nowMs - maxDays * DAY_MS + EDGE_MS;
  return new Date(Math.max(floor, fromLast));
}

/**
 * `hookrun reconcile <sender>` as a shipped job (`reconcile-<sender>`), for a
 * schedule of your choosing (none in platform.json by default). Without the
 * sender's key each run fails and names the variable to set.
 */
export function reconcileSenderJob(sender: ReconcileSender): EngineJobSpec {
  const reconcile = SENDER_RECONCILES[sender];
  const name = `reconcile-${sender}`;
  return {
    description: `${reconcile.title} gap repair: ${reconcile.jobDescription}`,
    timeoutMs: 10 * 60_000,
    async run({ db, config, signal, log, now, runId }) {
      reconcile.check(config);
      const previous = (await listCronRuns(db, { job: name, limit: 100 })).find((r) => r.status === 'succeeded' && r.id !== runId);
      const since = reconcileWindowStart(sender, now.getTime(), previous?.startedAt.getTime());
      const summary = await reconcile.run({ config, db, writer: new EventWriter(db), since, signal });
      log.info({ since: summary.since, found: summary.found, added: summary.added, alreadyStored: summary.alreadyStored }, `${sender} reconciled`);
    },
  };
}
