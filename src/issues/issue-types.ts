/** What an issue is about; each kind has its own fingerprint and its own way of counting occurrences. */
export const ISSUE_KINDS = ['handler_failing', 'sender_rejecting', 'job_failing', 'job_silent', 'backlog'] as const;

/** One of ISSUE_KINDS. */
export type IssueKind = (typeof ISSUE_KINDS)[number];

/** An issue's lifecycle: open → acknowledged (no more notifications) → resolved (by hand or by itself); a recurrence reopens it. */
export const ISSUE_STATUSES = ['open', 'acknowledged', 'resolved'] as const;

/** One of ISSUE_STATUSES. */
export type IssueStatus = (typeof ISSUE_STATUSES)[number];

/** An issue as the API, the CLI and the console show it (times as ISO strings). */
export interface Issue {
  id: number;
  fingerprint: string;
  kind: IssueKind;
  subject: string;
  title: string;
  detail: string | null;
  status: IssueStatus;
  occurrences: number;
  firstSeenAt: string;
  lastSeenAt: string;
  acknowledgedAt: string | null;
  resolvedAt: string | null;
  resolvedBy: string | null;
  notifiedAt: string | null;
}

/** A condition that has quietly not been seen this long is resolved by itself (resolved_by 'auto'). */
export const AUTO_RESOLVE_MS = 15 * 60_000;

/** How far back a pass looks for failures and rejections: the same 15 minutes. */
export const LOOKBACK_MS = 15 * 60_000;
