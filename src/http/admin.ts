import { Hono } from 'hono';
import { backfillBody, jobsQuery, mirrorQuery, pruneBody, reconcileBody, resumeBody, runQuery, runsQuery } from './admin-schemas.js';
import { MIRROR_TABLES, listMirrorRows, type MirrorTable } from '../db/mirror-read.js';
import { AppError } from '../errors.js';
import { parseReconcileSince } from '../payments-api/reconcile.js';
import { bearerToken } from '../secure-compare.js';
import { operatorByToken } from './admin-auth.js';
import { guardActions, noteAudit } from './audit-trail.js';
import { API_ACTIONS } from './audited-actions.js';
import { addAuditRoute } from './audit-routes.js';
import { parse, readJson, requestInstant } from './admin-request.js';
import { addEventRoutes } from './event-routes.js';
import { createErrorHandler, errorResponse } from './errors.js';
import { addHandlerRoutes } from './handler-routes.js';
import { addSenderReconcileRoute } from './reconcile-routes.js';
import { addReplayRoutes } from './replay-routes.js';
import { addIssueRoutes } from './issue-routes.js';
import { knownSources } from './known-sources.js';
import type { AdminApiDeps } from './admin-deps.js';

/** The header the CLI's admin client sends, so the audit says `cli` rather than `api`. */
export const CLIENT_HEADER = 'x-hookrun-client';

/** The error contract's `code: message` of a refused answer, for the audit. */
async function errorOf(response: Response): Promise<string> {
  const body = (await response.json().catch(() => undefined)) as { error?: { code?: string; message?: string } } | undefined;
  return body?.error ? `${body.error.code}: ${body.error.message}` : `HTTP ${response.status}`;
}

/** What the admin API reads and drives (its own file, so the route files that take it import no cycle). */
export type { AdminApiDeps };

/**
 * The admin JSON API, mounted at `/api`: events (list with filters and
 * cursor pagination, one event, replay one or all of a status), cron jobs
 * with schedule, next runs and last run, cron runs, run a job, handlers with
 * what their deliveries wait for, pause and resume one, the audit. Bearer
 * ADMIN_TOKEN or a named token of ADMIN_TOKENS, compared in constant time;
 * a viewer's may read, an operator's may also act, and every action is
 * recorded under its name. With no token set it answers 503 `not_configured` and is never open.
 */
export function createAdminApi(deps: AdminApiDeps): Hono {
  const { db, clock } = deps;
  const app = new Hono();
  app.onError(createErrorHandler(deps.log));
  app.notFound((c) => errorResponse(c, 404, 'not_found', `No admin route ${c.req.method} ${c.req.path}. See /openapi.json.`));

  app.use('*', async (c, next) => {
    const { operators } = deps.config;
    if (operators.length === 0) {
      throw new AppError('not_configured', 'Neither ADMIN_TOKEN nor ADMIN_TOKENS is set, so the admin API is closed. Set one and restart hookrun.');
    }
    const operator = operatorByToken(operators, bearerToken(c.req.header('authorization')));
    if (!operator)
      throw new AppError('unauthorized', 'Send Authorization: Bearer <token> (ADMIN_TOKEN, or yours from ADMIN_TOKENS); the token is missing or wrong.');
    c.set('signedIn', { name: operator.name, role: operator.role, via: c.req.header(CLIENT_HEADER) === 'cli' ? 'cli' : 'api' });
    await next();
    c.header('cache-control', 'no-store');
  });
  app.use(
    '*',
    guardActions({
      db,
      now: () => clock.now(),
      log: deps.log,
      actions: API_ACTIONS,
      refuse: (_, message) => {
        throw new AppError('forbidden', message);
      },
      failureOf: errorOf,
    }),
  );

  addEventRoutes(app, deps);
  addCronRoutes(app, deps);
  addHandlerRoutes(app, { db, handlers: deps.handlers, now: () => clock.now(), log: deps.log });
  addSenderReconcileRoute(app, { reconcileSender: deps.reconcileSender, now: () => clock.now(), log: deps.log, readBody: readJson });
  addReplayRoutes(app, { db, clock, log: deps.log, handlers: deps.handlers, readBody: readJson, sources: knownSources(deps.config) });
  addIssueRoutes(app, { db, now: () => clock.now(), log: deps.log, senders: deps.config });
  addAuditRoute(app, db);
  app.get('/changes', (c) => {
    if (!deps.changes) throw new AppError('not_found', 'CHANGES_DATABASE_URL is not set, so this hookrun captures no database changes.');
    return c.json({ changes: deps.changes.status() });
  });

  app.get('/mirror/:table', async (c) => {
    const table = c.req.param('table');
    if (!Object.hasOwn(MIRROR_TABLES, table)) {
      throw new AppError('not_found', `No mirror table "${table.slice(0, 40)}". Tables: ${Object.keys(MIRROR_TABLES).join(', ')}.`);
    }
    const q = parse(mirrorQuery, c.req.query());
    return c.json({ table, rows: await listMirrorRows(db, table as MirrorTable, q) });
  });

  app.post('/payments/reconcile', async (c) => {
    if (!deps.reconcilePayments) {
      throw new AppError(
        'not_configured',
        'STRIPE_SECRET_KEY is not set, so hookrun cannot list Stripe events. Set it (Developers → API keys) and restart hookrun.',
      );
    }
    const body = parse(reconcileBody, await readJson(c));
    let since: Date;
    try {
      since = parseReconcileSince(body.since, clock.now());
    } catch (error) {
      throw new AppError('bad_request', (error as Error).message);
    }
    const summary = await deps.reconcilePayments(since);
    deps.log.info({ since: summary.since, found: summary.found, added: summary.added }, 'payments reconciled by the admin API');
    return c.json(summary);
  });

  app.post('/retention/prune', async (c) => {
    if (!deps.prune) throw new AppError('not_found', 'This hookrun does not run retention.');
    const { dryRun } = parse(pruneBody, await readJson(c));
    const report = await deps.prune(dryRun);
    if (!dryRun)
      deps.log.info(
        { events: report.events, dedupeKeys: report.dedupeKeys, cronRuns: report.cronRuns, auditEntries: report.auditEntries },
        'retention pass run by the admin API',
      );
    noteAudit(
      c,
      `${dryRun ? 'dry run: would delete' : 'deleted'} ${report.events} events, ${report.dedupeKeys} dedupe keys, ${report.cronRuns} cron runs, ${report.auditEntries} audit entries`,
    );
    return c.json(report);
  });

  return app;
}

function addCronRoutes(app: Hono, deps: AdminApiDeps): void {
  const { cron } = deps;
  app.get('/cron/jobs', async (c) => {
    const q = parse(jobsQuery, c.req.query());
    return c.json({ jobs: await cron.listJobs(q.count) });
  });

  app.get('/cron/runs', async (c) => {
    const q = parse(runsQuery, c.req.query());
    const runs = await cron.listRuns({ job: q.job, status: q.status, limit: q.limit + 1, beforeId: q.cursor === undefined ? undefined : Number(q.cursor) });
    const page = runs.slice(0, q.limit);
    return c.json({ runs: page, nextCursor: runs.length > q.limit ? String(page[page.length - 1]!.id) : null });
  });

  app.post('/cron/jobs/:job/run', async (c) => {
    const { trigger } = parse(runQuery, c.req.query());
    const job = c.req.param('job');
    const run = await cron.runJob(job, trigger);
    if (run.status === 'skipped') {
      throw new AppError('conflict', `Job "${job}" is already running; this call was recorded as skipped (run ${run.id}).`);
    }
    deps.log.info({ job, trigger, run: run.id, status: run.status }, 'cron job run by the admin API');
    return c.json({ run });
  });

  app.post('/cron/jobs/:job/pause', async (c) => {
    const state = await cron.pause(c.req.param('job'));
    deps.log.info({ job: state.job, changed: state.changed }, 'cron job paused by the admin API');
    return c.json(state);
  });

  app.post('/cron/jobs/:job/resume', async (c) => {
    const body = parse(resumeBody, await readJson(c));
    const state = await cron.resume(c.req.param('job'), body);
    deps.log.info({ job: state.job, changed: state.changed, caughtUp: state.caughtUp }, 'cron job resumed by the admin API');
    return c.json(state);
  });

  app.post('/cron/jobs/:job/backfill', async (c) => {
    const body = parse(backfillBody, await readJson(c));
    const plan = await cron.backfill(c.req.param('job'), { from: requestInstant(body.from, 'from'), to: requestInstant(body.to, 'to'), dryRun: body.dryRun });
    if (!plan.dryRun) deps.log.info({ job: plan.job, from: plan.from, to: plan.to, queued: plan.queued }, 'cron ticks backfilled by the admin API');
    return c.json(plan);
  });
}
