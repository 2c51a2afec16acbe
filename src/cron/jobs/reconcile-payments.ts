import { listCronRuns } from '../run-history-sql.js';
import { EventWriter } from '../../db/event-writer.js';
import type { EngineJobSpec } from '../job.js';

const DAY_MS = 86_400_000;
/** Stripe retries a delivery for 3 days: every run looks at least this far back. */
const MIN_WINDOW_MS = 3 * DAY_MS;
/** Overlap with the previous successful run, so an event created as it ran is not missed. */
const OVERLAP_MS = 3_600_000;

/**
 * `hookrun reconcile payments` as a job, for a schedule of your choosing (it
 * is not in platform.json by default): list Stripe's events since the last
 * successful run (the first run: 3 days; at least 3, at most Stripe's 30) and store those the
 * inbox is missing. Needs STRIPE_SECRET_KEY; without it each run fails and says so.
 */
export default {
  description: "Store the Stripe events the inbox is missing (downtime past Stripe's 3-day retries). Needs STRIPE_SECRET_KEY.",
  timeoutMs: 10 * 60_000,
  async run({ db, stripe, signal, log, now, runId }) {
    if (!stripe)
      throw new Error('STRIPE_SECRET_KEY is not set: set a Stripe secret or restricted key (read access to events), or remove this job from platform.json.');
    const { reconcilePayments, STRIPE_EVENT_RETENTION_DAYS } = await import('../../payments-api/reconcile.js'); // loaded when it runs, not when jobs are listed
    const previous = (await listCronRuns(db, { job: 'reconcile-payments', limit: 100 })).find((r) => r.status === 'succeeded' && r.id !== runId);
    const nowMs = now.getTime();
    const fromLast = previous ? previous.startedAt.getTime() - OVERLAP_MS : nowMs - MIN_WINDOW_MS;
    const sinceMs = Math.max(nowMs - STRIPE_EVENT_RETENTION_DAYS * DAY_MS, Math.min(nowMs - MIN_WINDOW_MS, fromLast));
    const summary = await reconcilePayments({ api: stripe, writer: new EventWriter(db), since: new Date(sinceMs), signal });
    log.info({ since: summary.since, found: summary.found, added: summary.added, alreadyStored: summary.alreadyStored }, 'payments reconciled');
  },
} satisfies EngineJobSpec;
