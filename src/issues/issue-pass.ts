import type { Queryable } from '../db/database.js';
import { detectHandlerFailures } from './detect-handlers.js';
import { detectJobFailures, ONCE_PER_OPENING, recordSilentJobs, type SilentJob } from './detect-jobs.js';
import { detectSenderRejections } from './detect-senders.js';
import { claimUnnotified, quietSince, recordSighting, resolveQuiet } from './issue-store.js';
import type { Issue } from './issue-types.js';

/** A silent job no instance has reported for this long is resolved (a freshly started instance does not see old ticks, so one pass's silence is not enough). */
const SILENT_CLEAR_MS = 2 * 60_000;

/** What the monitor found this pass besides the failures in the database. */
export interface PassConditions {
  /** The inbox's backlog, when the oldest due event has waited past ALERT_BACKLOG_SECONDS. */
  backlog?: string;
  /** The jobs the overdue check reports. */
  silent: readonly SilentJob[];
}

/** Where a pass tells of issues: one that opened or reopened, one that cleared by itself after it was told. */
export interface IssueTeller {
  opened(issue: Issue): void;
  cleared(issue: Issue): void;
}

/** The one key of an issue's alerts, from its opening to its clearing (PagerDuty's `dedup_key`). */
export const issueKey = (issue: Pick<Issue, 'id'>) => `hookrun-issue-${issue.id}`;

/** The one line the alert channel gets when an issue opens or reopens. */
export function issueLine(issue: Issue): string {
  const times = `${issue.occurrences} time${issue.occurrences === 1 ? '' : 's'} so far`;
  return `issue #${issue.id} ${issue.title} (${issue.kind}, ${times}): /admin/issues/${issue.id}`;
}

/**
 * One detection pass at `now`: record what fails (handlers, jobs, sender
 * routes) and the conditions, resolve what has cleared, then hand each issue
 * that opened or reopened, and that nobody was told about, to `tell`,
 * exactly once across instances, and each told issue that cleared by itself
 * (its resolve, once: the statement that resolves it returns it to one
 * instance). Without `tell` no issue is claimed (a later instance with an
 * alert channel tells about them).
 */
export async function runIssuePass(db: Queryable, now: number, conditions: PassConditions, tell?: IssueTeller): Promise<void> {
  const at = new Date(now);
  const cleared: Issue[] = [];
  await detectHandlerFailures(db, now);
  await detectJobFailures(db, now);
  await detectSenderRejections(db, now);
  if (conditions.backlog) {
    const sighting = { fingerprint: 'backlog', kind: 'backlog' as const, subject: 'inbox', detail: conditions.backlog, seenAt: at, firstSeenAt: at };
    await recordSighting(db, { ...sighting, title: 'Events wait longer than ALERT_BACKLOG_SECONDS (is a worker running?)', occurrences: 1 }, ONCE_PER_OPENING);
  } else {
    cleared.push(...(await resolveQuiet(db, ['backlog'], new Date(now + 1), at))); // the queue is moving again
  }
  await recordSilentJobs(db, conditions.silent, now);
  cleared.push(...(await resolveQuiet(db, ['job_silent'], new Date(now - SILENT_CLEAR_MS), at)));
  cleared.push(...(await resolveQuiet(db, ['handler_failing', 'job_failing', 'sender_rejecting'], quietSince(now), at)));
  if (!tell) return;
  for (const issue of cleared) tell.cleared(issue);
  for (const issue of await claimUnnotified(db, at)) tell.opened(issue);
}
