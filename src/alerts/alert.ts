/** What an alert is about; each kind is coalesced and rate-limited on its own in chat. */
export type AlertKind = 'issue' | 'event_dead' | 'job_failed' | 'tick_late' | 'job_stopped' | 'backlog' | 'wal_retained';

/** One condition that opened (`trigger`) or cleared (`resolve`), as incident tools take it. */
export interface Alert {
  action: 'trigger' | 'resolve';
  kind: AlertKind | 'test';
  /** The same for a condition's trigger and its resolve: PagerDuty's `dedup_key`, the webhook's `data.key`. */
  key: string;
  /** One line. */
  summary: string;
  severity: 'critical' | 'error' | 'warning' | 'info';
  at: Date;
}
