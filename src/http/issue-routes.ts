import type { Context, Hono } from 'hono';
import type { Database } from '../db/database.js';
import { AppError } from '../errors.js';
import { acknowledgeIssue, countIssues, getIssue, listIssues, resolveIssue } from '../issues/issue-store.js';
import { listSenderActivity, type SenderConfig } from '../issues/sender-activity.js';
import type { Logger } from '../log.js';
import { firstIssue } from './admin-schemas.js';
import { actorOf } from './audit-trail.js';

/** The senders' part of the config, as the admin API's deps type it. */
export type { SenderConfig };
import { issueListQuery } from './issue-schemas.js';

/** What the issue and sender routes read: the database, the time, and (for senders) which routes have a secret. */
export interface IssueRouteDeps {
  db: Database;
  now: () => number;
  log: Logger;
  /** The running config's senders; absent (a bare test app) lists no route. */
  senders?: Partial<SenderConfig>;
}

/** An issue id from the path; a 400 that says what it must be otherwise. */
export function issueId(c: Context): number {
  const raw = c.req.param('id') ?? '';
  if (!/^\d{1,15}$/.test(raw)) throw new AppError('bad_request', `Issue id must be a positive whole number, not "${raw.slice(0, 40)}".`);
  return Number(raw);
}

/** The senders config with what a partial one lacks filled in empty. */
export const senderConfigOf = (senders: Partial<SenderConfig> | undefined): SenderConfig | undefined =>
  senders?.secrets && {
    secrets: senders.secrets,
    customWebhooks: senders.customWebhooks ?? [],
    providers: senders.providers ?? ({} as SenderConfig['providers']),
  };

/**
 * `GET /api/issues`, `GET /api/issues/{id}`, `POST /api/issues/{id}/acknowledge|resolve`
 * (the CLI's `hookrun issues`) and `GET /api/senders` (each route's secret
 * set or not, last delivery, accepted and refused in 24 h). Behind the admin
 * API's bearer check like every route under `/api`.
 */
export function addIssueRoutes(app: Hono, deps: IssueRouteDeps): void {
  const { db } = deps;
  app.get('/issues', async (c) => {
    const parsed = issueListQuery.safeParse(c.req.query());
    if (!parsed.success) throw new AppError('bad_request', firstIssue(parsed.error));
    return c.json({ issues: await listIssues(db, parsed.data), counts: await countIssues(db) });
  });

  app.get('/issues/:id', async (c) => {
    const id = issueId(c);
    const issue = await getIssue(db, id);
    if (!issue) throw new AppError('not_found', `No issue with id ${id}; GET /api/issues lists them.`);
    return c.json({ issue });
  });

  app.post('/issues/:id/acknowledge', async (c) => {
    const issue = await acknowledgeIssue(db, issueId(c), new Date(deps.now()));
    deps.log.info({ issue: issue.id, status: issue.status }, 'issue acknowledged by the admin API');
    return c.json({ issue });
  });

  app.post('/issues/:id/resolve', async (c) => {
    const issue = await resolveIssue(db, issueId(c), new Date(deps.now()), actorOf(c));
    deps.log.info({ issue: issue.id }, 'issue resolved by the admin API');
    return c.json({ issue });
  });

  app.get('/senders', async (c) => {
    const config = senderConfigOf(deps.senders);
    return c.json({ senders: config ? await listSenderActivity(db, config, deps.now()) : [] });
  });
}
