import { Hono, type Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { SOURCES } from '../webhooks/providers/index.js';
import { isSessionRevoked, revokeSession } from '../db/admin-sessions.js';
import { EVENT_STATUSES, countEventsByStatus, countsPerMinute, getEvent, listAttempts, listEvents } from '../db/events.js';
import { AppError } from '../errors.js';
import { replayEvent, replayEventsByStatus } from '../inbox/replay.js';
import type { AdminApiDeps } from './admin.js';
import { secureEqual } from '../secure-compare.js';
import { createSession, csrfTokenMatches, sessionIsValid, SESSION_SECONDS } from './admin-auth.js';
import { socketAddress } from '../cron/routes.js';
import { MIRROR_TABLES, listMirrorRows, type MirrorTable } from '../db/mirror-read.js';
import { eventPage, loginPage, messagePage, mirrorPage, overviewPage, replayOutcome } from './dashboard-pages.js';
import { listHandlerOverviews } from '../inbox/handler-overview.js';
import { handlerNotice } from './dashboard-handlers.js';
import { addHandlerControlRoutes } from './dashboard-handler-routes.js';
import { catalogOf } from './handler-routes.js';
import { LoginThrottle } from './login-throttle.js';
import { csrfOf, formField, isHttps, page, sameOrigin, SECURITY_HEADERS, SESSION_COOKIE } from './dashboard-http.js';

/**
 * The dashboard at `/admin`: server-rendered HTML on the same query modules
 * as the admin API (no build step, no external assets, everything escaped).
 * Login with ADMIN_TOKEN sets an HttpOnly, SameSite=Strict cookie holding a
 * random session id signed with the token, never the token. Every POST needs that session,
 * a same-origin Origin and the session's CSRF token.
 */
export function createDashboard(deps: AdminApiDeps): Hono {
  const app = new Hono();
  app.use('*', async (c, next) => {
    if (!deps.config.adminToken)
      return page(c, messagePage('Not configured', 'ADMIN_TOKEN is not set, so the dashboard is closed. Set ADMIN_TOKEN and restart hookrun.'), 503);
    if (c.req.method === 'POST' && !sameOrigin(c)) return page(c, messagePage('Forbidden', 'Cross-site form posts are refused.'), 403);
    await next();
  });
  addLoginRoutes(app, deps);
  // Everything below needs a session; POSTs also need its CSRF token.
  app.use('*', async (c, next) => {
    const current = await session(c, deps);
    if (!current) return c.redirect('/admin/login', 303);
    if (c.req.method === 'POST' && !csrfTokenMatches(await formField(c, 'csrf'), current, deps.config.adminToken!)) {
      return page(c, messagePage('Forbidden', 'The form is stale or was not sent by this dashboard; reload the page and try again.'), 403);
    }
    await next();
  });
  app.post('/logout', async (c) => {
    const value = getCookie(c, SESSION_COOKIE)!;
    // Remembered until the session would have expired, so a copied cookie stops working too.
    await revokeSession(deps.db, value, new Date(Number(value.split('.')[0]) * 1000), new Date(deps.clock.now()));
    deleteCookie(c, SESSION_COOKIE, { path: '/admin' });
    return c.redirect('/admin/login', 303);
  });
  app.get('/', (c) => overview(c, deps));
  addEventRoutes(app, deps);
  addCronRoutes(app, deps);
  addHandlerControlRoutes(app, deps);
  return app;
}

/** The request's session when it is signed with ADMIN_TOKEN, not expired, and not logged out (on any instance). */
async function session(c: Context, deps: AdminApiDeps): Promise<string | undefined> {
  const value = getCookie(c, SESSION_COOKIE);
  if (!value || !sessionIsValid(value, deps.config.adminToken!, deps.clock.now())) return undefined;
  return (await isSessionRevoked(deps.db, value)) ? undefined : value;
}

/** The session's CSRF token; only behind the session guard, which let only a live session through: its cookie is the session. */

function addLoginRoutes(app: Hono, deps: AdminApiDeps): void {
  const { clock } = deps;
  const throttle = new LoginThrottle();
  app.get('/login', async (c) => ((await session(c, deps)) ? c.redirect('/admin', 303) : page(c, loginPage())));
  app.post('/login', async (c) => {
    const client = socketAddress(c) ?? 'unknown';
    // The token first: a correct one always logs in, however many wrong ones came from the same address (a proxy's).
    const token = await formField(c, 'token');
    if (!secureEqual(token, deps.config.adminToken!)) {
      const waitMs = throttle.retryAfterMs(client, clock.now());
      throttle.fail(client, clock.now());
      if (waitMs > 0) {
        // Not logged: the 10 refusals before it were (at most 100 a minute), a flood past them is not.
        c.header('retry-after', String(Math.ceil(waitMs / 1000)));
        return page(c, loginPage(`Too many wrong tokens from your address; try again in ${Math.ceil(waitMs / 1000)} s.`), 429);
      }
      return page(c, loginPage('That is not the ADMIN_TOKEN.'), 401);
    }
    throttle.succeed(client);
    setCookie(c, SESSION_COOKIE, createSession(deps.config.adminToken!, clock.now()), {
      path: '/admin',
      httpOnly: true,
      sameSite: 'Strict',
      secure: isHttps(c),
      maxAge: SESSION_SECONDS,
    });
    return c.redirect('/admin', 303);
  });
}

/** GET /admin: counts, the filtered event list, handlers, jobs and runs. */
async function overview(c: Context, deps: AdminApiDeps): Promise<Response> {
  const { db, clock } = deps;
  const text = (name: string, max: number) => {
    const value = c.req.query(name)?.trim();
    return value ? value.slice(0, max) : undefined;
  };
  const filter = {
    status: (EVENT_STATUSES as readonly string[]).includes(c.req.query('status') ?? '') ? c.req.query('status') : undefined,
    source: (SOURCES as readonly string[]).includes(c.req.query('source') ?? '') ? c.req.query('source') : undefined,
    type: text('type', 255),
    q: text('q', 255),
    live: c.req.query('live') === '1' ? '1' : undefined,
    parked: c.req.query('parked') === '1' ? '1' : undefined,
  };
  const cursor = /^\d{1,15}$/.test(c.req.query('cursor') ?? '') ? Number(c.req.query('cursor')) : undefined;
  const [counts, page_, jobs, runs, perMinute, handlers] = await Promise.all([
    countEventsByStatus(db),
    listEvents(db, {
      status: filter.status,
      source: filter.source,
      type: filter.type,
      search: filter.q,
      parked: filter.parked === '1',
      before: cursor,
      limit: 50,
    }),
    deps.cron.listJobs(3),
    deps.cron.listRuns({ limit: 10 }),
    countsPerMinute(db, clock.now()),
    catalogOf(deps.handlers).then((catalog) => listHandlerOverviews(db, catalog, clock.now(), { topKeys: 3 })),
  ]);
  const replayed = c.req.query('replayed');
  const notice =
    replayed !== undefined && /^\d+$/.test(replayed)
      ? `Replayed ${replayed} event(s).`
      : (cronNotice(c.req.query('job'), c.req.query('did'), jobs) ?? handlerNotice(c.req.query('handler'), c.req.query('did'), handlers));
  return page(
    c,
    overviewPage({
      counts,
      events: page_.events,
      nextCursor: page_.nextCursor,
      filter,
      jobs,
      runs,
      handlers,
      notice,
      csrf: csrfOf(c, deps),
      now: clock.now(),
      perMinute,
    }),
  );
}

const eventId = (c: Context) => (/^\d{1,15}$/.test(c.req.param('id') ?? '') ? Number(c.req.param('id')) : 0);

function addEventRoutes(app: Hono, deps: AdminApiDeps): void {
  const { db, clock } = deps;
  app.get('/events/:id', async (c) => {
    const event = await getEvent(db, eventId(c));
    if (!event) return page(c, messagePage('Not found', `No event with id ${c.req.param('id')}.`, csrfOf(c, deps)), 404);
    return page(
      c,
      eventPage(event, await listAttempts(db, event.id), csrfOf(c, deps), clock.now(), c.req.query('replayed') === '1' ? replayOutcome(event) : undefined),
    );
  });

  app.get('/mirror/:table', async (c) => {
    const table = c.req.param('table');
    if (!Object.hasOwn(MIRROR_TABLES, table))
      return page(
        c,
        messagePage('Not found', `No mirror table "${table.slice(0, 40)}". Tables: ${Object.keys(MIRROR_TABLES).join(', ')}.`, csrfOf(c, deps)),
        404,
      );
    const search = c.req.query('search')?.trim().slice(0, 100) || undefined;
    return page(c, mirrorPage(table, await listMirrorRows(db, table as MirrorTable, { limit: 100, search }), search, csrfOf(c, deps)));
  });

  app.get('/events/:id/payload.json', async (c) => {
    const event = await getEvent(db, eventId(c));
    if (!event) return page(c, messagePage('Not found', `No event with id ${c.req.param('id')}.`, csrfOf(c, deps)), 404);
    return c.json(event.payload as object, 200, { ...SECURITY_HEADERS, 'content-disposition': `inline; filename="event-${event.id}.json"` });
  });

  app.post('/events/replay', async (c) => {
    const status = await formField(c, 'status');
    if (!status) return page(c, messagePage('Bad request', 'Say which status to replay.', csrfOf(c, deps)), 400);
    try {
      const count = await replayEventsByStatus(db, clock, { status });
      deps.log.info({ status, replayed: count }, 'events replayed from the dashboard');
      return c.redirect(`/admin?replayed=${count}`, 303);
    } catch (error) {
      if (error instanceof AppError) return page(c, messagePage('Not replayed', error.message, csrfOf(c, deps)), error.status);
      throw error;
    }
  });

  app.post('/events/:id/replay', async (c) => {
    const id = eventId(c);
    const handler = (await formField(c, 'handler')) || undefined; // one handler of the event, or all
    try {
      if (handler !== undefined && !/^[a-z0-9][a-z0-9-]{0,99}$/.test(handler))
        throw new AppError('bad_request', 'A handler name is lowercase letters, digits and dashes.');
      await replayEvent(db, clock, id, { handler });
    } catch (error) {
      if (error instanceof AppError) return page(c, messagePage('Not replayed', error.message, csrfOf(c, deps)), error.status);
      throw error;
    }
    deps.log.info({ id, handler }, 'event replayed from the dashboard');
    return c.redirect(`/admin/events/${id}?replayed=1`, 303);
  });
}

function addCronRoutes(app: Hono, deps: AdminApiDeps): void {
  for (const action of ['run', 'pause', 'resume'] as const) {
    app.post(`/cron/:job/${action}`, async (c) => {
      const job = c.req.param('job');
      try {
        const did =
          action === 'run'
            ? (await deps.cron.runJob(job, 'http')).status
            : action === 'pause'
              ? (await deps.cron.pause(job), 'paused')
              : (await deps.cron.resume(job), 'resumed');
        deps.log.info({ job, action, did }, 'cron job controlled from the dashboard');
        return c.redirect(`/admin?job=${encodeURIComponent(job)}&did=${did}`, 303);
      } catch (error) {
        if (error instanceof AppError) return page(c, messagePage('Not done', error.message, csrfOf(c, deps)), error.status);
        throw error;
      }
    });
  }
}

const CRON_NOTICES: Record<string, string> = {
  succeeded: 'ran and succeeded',
  failed: 'ran and failed',
  skipped: 'is already running (recorded as skipped)',
  queued: 'is running; this run waits behind it',
  paused: 'is paused on every instance',
  resumed: 'is resumed',
};

/** The line shown after a job button, for a job that exists. */
function cronNotice(job: string | undefined, did: string | undefined, jobs: Array<{ name: string }>): string | undefined {
  if (!job || !did || !Object.hasOwn(CRON_NOTICES, did) || !jobs.some((j) => j.name === job)) return undefined;
  return `${job} ${CRON_NOTICES[did]}.`;
}
