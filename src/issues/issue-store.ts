import type { Queryable } from '../db/database.js';
import { AppError } from '../errors.js';
import { AUTO_RESOLVE_MS, type Issue, type IssueKind, type IssueStatus } from './issue-types.js';

const COLUMNS = `id, fingerprint, kind, subject, title, detail, status, occurrences,
  first_seen_at AS "firstSeenAt", last_seen_at AS "lastSeenAt", acknowledged_at AS "acknowledgedAt",
  resolved_at AS "resolvedAt", resolved_by AS "resolvedBy", notified_at AS "notifiedAt"`;

type IssueRow = Omit<Issue, 'firstSeenAt' | 'lastSeenAt' | 'acknowledgedAt' | 'resolvedAt' | 'notifiedAt'> &
  Record<'firstSeenAt' | 'lastSeenAt' | 'acknowledgedAt' | 'resolvedAt' | 'notifiedAt', Date | string | null>;

const iso = (value: Date | string | null) => (value === null ? null : new Date(value).toISOString());

function toIssue(row: IssueRow): Issue {
  return {
    ...row,
    id: Number(row.id),
    occurrences: Number(row.occurrences),
    firstSeenAt: iso(row.firstSeenAt)!,
    lastSeenAt: iso(row.lastSeenAt)!,
    acknowledgedAt: iso(row.acknowledgedAt),
    resolvedAt: iso(row.resolvedAt),
    notifiedAt: iso(row.notifiedAt),
  };
}

/** One sighting of a condition by a monitor pass. */
export interface Sighting {
  fingerprint: string;
  kind: IssueKind;
  subject: string;
  title: string;
  detail: string;
  /** The latest occurrence's time (a failure's), or the pass's time for a condition that holds now. */
  seenAt: Date;
  /** Occurrences when the issue is new. */
  occurrences: number;
  firstSeenAt: Date;
}

/** A resolved issue whose condition comes back after it was resolved reopens. */
const REOPEN = `i.status = 'resolved' AND EXCLUDED.last_seen_at > i.resolved_at`;

/**
 * Insert the issue, or move an existing one on: `occurrences` is the SQL of
 * its new count (it may read the existing row as `i`), the latest detail
 * wins, a resolved issue reopens. Only a sighting newer than the row's
 * last_seen_at (or a reopening) changes it, so two instances seeing the same
 * failures count them once. Returns whether the row changed.
 */
export async function recordSighting(db: Queryable, s: Sighting, occurrences: string, extra: unknown[] = []): Promise<boolean> {
  const rows = await db.query(
    `INSERT INTO hookrun.issues AS i (fingerprint, kind, subject, title, detail, occurrences, first_seen_at, last_seen_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7::timestamptz, $8::timestamptz)
     ON CONFLICT (fingerprint) DO UPDATE SET
       occurrences = ${occurrences},
       last_seen_at = greatest(i.last_seen_at, EXCLUDED.last_seen_at),
       title = EXCLUDED.title,
       detail = EXCLUDED.detail,
       status = CASE WHEN ${REOPEN} THEN 'open' ELSE i.status END,
       acknowledged_at = CASE WHEN ${REOPEN} THEN NULL ELSE i.acknowledged_at END,
       resolved_by = CASE WHEN ${REOPEN} THEN NULL ELSE i.resolved_by END,
       notified_at = CASE WHEN ${REOPEN} THEN NULL ELSE i.notified_at END,
       resolved_at = CASE WHEN ${REOPEN} THEN NULL ELSE i.resolved_at END
     WHERE EXCLUDED.last_seen_at > i.last_seen_at OR (${REOPEN})
     RETURNING id`,
    [s.fingerprint, s.kind, s.subject, s.title, s.detail.slice(0, 2000), s.occurrences, s.firstSeenAt, s.seenAt, ...extra],
  );
  return rows.length === 1;
}

/** Resolve ('auto') the issues of `kinds` not seen since `before`; returns those resolved that had been told (their resolve is told once: only this statement's caller sees them). */
export async function resolveQuiet(db: Queryable, kinds: readonly IssueKind[], before: Date, now: Date): Promise<Issue[]> {
  const rows = await db.query<IssueRow>(
    `UPDATE hookrun.issues SET status = 'resolved', resolved_at = $3::timestamptz, resolved_by = 'auto'
     WHERE status <> 'resolved' AND kind = ANY($1::text[]) AND last_seen_at < $2::timestamptz RETURNING ${COLUMNS}`,
    [kinds, before, now],
  );
  return rows.map(toIssue).filter((issue) => issue.notifiedAt !== null);
}

/** The quiet time after which an issue of a failure kind resolves by itself. */
export const quietSince = (now: number) => new Date(now - AUTO_RESOLVE_MS);

/** Claim the open issues nobody has been told about yet: each is returned to exactly one caller, across instances. */
export async function claimUnnotified(db: Queryable, now: Date): Promise<Issue[]> {
  const rows = await db.query<IssueRow>(
    `UPDATE hookrun.issues SET notified_at = $1::timestamptz WHERE status = 'open' AND notified_at IS NULL RETURNING ${COLUMNS}`,
    [now],
  );
  return rows.map(toIssue).sort((a, b) => a.id - b.id);
}

/** Issues of a status (all without one), most recently seen first. */
export async function listIssues(db: Queryable, options: { status?: IssueStatus; limit?: number } = {}): Promise<Issue[]> {
  const rows = await db.query<IssueRow>(
    `SELECT ${COLUMNS} FROM hookrun.issues WHERE ($1::text IS NULL OR status = $1) ORDER BY last_seen_at DESC, id DESC LIMIT $2`,
    [options.status ?? null, options.limit ?? 100],
  );
  return rows.map(toIssue);
}

/** How many issues are in each status (every status present, 0 when none). */
export async function countIssues(db: Queryable): Promise<Record<IssueStatus, number>> {
  const rows = await db.query<{ status: IssueStatus; n: number | string }>('SELECT status, count(*) AS n FROM hookrun.issues GROUP BY status');
  const counts: Record<IssueStatus, number> = { open: 0, acknowledged: 0, resolved: 0 };
  for (const row of rows) if (row.status in counts) counts[row.status] = Number(row.n);
  return counts;
}

/** One issue, or undefined. */
export async function getIssue(db: Queryable, id: number): Promise<Issue | undefined> {
  const [row] = await db.query<IssueRow>(`SELECT ${COLUMNS} FROM hookrun.issues WHERE id = $1`, [id]);
  return row && toIssue(row);
}

/** Acknowledge an open issue (someone is on it: no more notifications until it reopens); acknowledging twice is a no-op. */
export async function acknowledgeIssue(db: Queryable, id: number, now: Date): Promise<Issue> {
  await db.query(`UPDATE hookrun.issues SET status = 'acknowledged', acknowledged_at = $2::timestamptz WHERE id = $1 AND status = 'open'`, [id, now]);
  const issue = await mustExist(db, id);
  if (issue.status === 'resolved')
    throw new AppError('conflict', `Issue ${id} is resolved; there is nothing to acknowledge (it reopens by itself if it recurs).`);
  return issue;
}

/** Resolve an issue by hand (`by` says who); resolving twice is a no-op. */
export async function resolveIssue(db: Queryable, id: number, now: Date, by: string): Promise<Issue> {
  await db.query(`UPDATE hookrun.issues SET status = 'resolved', resolved_at = $2::timestamptz, resolved_by = $3 WHERE id = $1 AND status <> 'resolved'`, [
    id,
    now,
    by,
  ]);
  return mustExist(db, id);
}

async function mustExist(db: Queryable, id: number): Promise<Issue> {
  const issue = await getIssue(db, id);
  if (!issue) throw new AppError('not_found', `No issue with id ${id}; \`hookrun issues list\` shows them.`);
  return issue;
}
