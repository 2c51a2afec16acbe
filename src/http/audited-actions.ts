/** An action the audit names: what it is, and what it acts on from the route's parameters. */
export interface AuditedAction {
  action: string;
  target?: (params: Record<string, string>) => string;
}

const job = (p: Record<string, string>) => p.job ?? p.name ?? '';
const handler = (p: Record<string, string>) => p.name ?? '';
const event = (p: Record<string, string>) => `event ${p.id}`;
const replay = (p: Record<string, string>) => `replay ${p.id}`;
const issue = (p: Record<string, string>) => `issue ${p.id}`;

/** The actions the admin API and the console serve at the same path (relative to `/api` and `/admin`). */
const SHARED_ACTIONS: Readonly<Record<string, AuditedAction>> = {
  'POST /events/replay': { action: 'events.replay' },
  'POST /events/:id/replay': { action: 'event.replay', target: event },
  'POST /replays': { action: 'replay.start' },
  'POST /replays/:id/cancel': { action: 'replay.cancel', target: replay },
  'POST /handlers/:name/pause': { action: 'handler.pause', target: handler },
  'POST /handlers/:name/resume': { action: 'handler.resume', target: handler },
  'POST /issues/:id/acknowledge': { action: 'issue.acknowledge', target: issue },
  'POST /issues/:id/resolve': { action: 'issue.resolve', target: issue },
};

/**
 * Every mutating route of the admin API (`/api`), by method and path: each
 * needs the operator role and is recorded under this action. A POST route
 * missing here is still refused to a viewer and recorded under its path (and
 * a test fails until it is named here).
 */
export const API_ACTIONS: Readonly<Record<string, AuditedAction>> = {
  ...SHARED_ACTIONS,
  'POST /cron/jobs/:job/run': { action: 'job.run', target: job },
  'POST /cron/jobs/:job/pause': { action: 'job.pause', target: job },
  'POST /cron/jobs/:job/resume': { action: 'job.resume', target: job },
  'POST /cron/jobs/:job/backfill': { action: 'job.backfill', target: job },
  'POST /reconcile/:sender': { action: 'reconcile', target: (p) => p.sender ?? '' },
  'POST /payments/reconcile': { action: 'reconcile', target: () => 'payments' },
  'POST /retention/prune': { action: 'retention.prune' },
};

/** The console's buttons (`/admin`), under the same action names as the admin API's routes. */
export const CONSOLE_ACTIONS: Readonly<Record<string, AuditedAction>> = {
  ...SHARED_ACTIONS,
  'POST /cron/:job/run': { action: 'job.run', target: job },
  'POST /cron/:job/pause': { action: 'job.pause', target: job },
  'POST /cron/:job/resume': { action: 'job.resume', target: job },
  'POST /jobs/:name/backfill': { action: 'job.backfill', target: job },
};
