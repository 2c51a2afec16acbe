import { Hono, type Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { isSessionRevoked, revokeSession } from '../../db/admin-sessions.js';
import type { AdminApiDeps } from '../admin.js';
import type { Operator } from '../../config/operators.js';
import { createSession, csrfTokenMatches, operatorByToken, sessionOperator, SESSION_SECONDS } from '../admin-auth.js';
import { guardActions } from '../audit-trail.js';
import { CONSOLE_ACTIONS } from '../audited-actions.js';
import { socketAddress } from '../../cron/routes.js';
import { blockMessage, CredentialThrottle, retryAfterSeconds } from '../credential-throttle.js';
import { loginPage, messagePage } from './layout.js';
import { crossSiteRefusal, csrfOf, formField, isHttps, page, pageError, SESSION_COOKIE } from './http.js';
import { showSignedIn } from './signed-in.js';
import { addAuditPage } from './audit.js';
import { addOverviewRoute } from './overview.js';
import { addEventRoutes } from './events.js';
import { addMirrorRoutes } from './mirrors.js';
import { addJobRoutes } from './jobs.js';
import { addHandlerControlRoutes } from './handler-routes.js';
import { addSenderPages } from './senders.js';
import { addIssuePages } from './issues.js';
import { addReplayPages } from './replays.js';
import { addHandlerPages } from './handler-pages.js';
import { addJobPages } from './job-pages.js';
import { addSettingsPage } from './settings.js';
import { addLiveRoutes } from './live.js';
import { underMountPath } from './mount-path.js';

/**
 * The dashboard at `/admin`: server-rendered HTML on the same query modules
 * as the admin API (no build step, no external assets, everything escaped).
 * Login with ADMIN_TOKEN or a named token of ADMIN_TOKENS sets an HttpOnly,
 * SameSite=Strict cookie holding a random session id and the operator's name,
 * signed with their token, never the token. Every POST needs that session,
 * a same-origin Origin and the session's CSRF token; an action needs the
 * operator role, and each one is recorded in the audit. Served under a mount
 * path (`hookrun/next`), every URL it writes carries that path.
 */
export function createDashboard(deps: AdminApiDeps): Hono {
  const app = new Hono();
  app.use('*', underMountPath());
  app.use('*', async (c, next) => {
    if (deps.config.operators.length === 0)
      return page(
        c,
        messagePage('Not configured', 'Neither ADMIN_TOKEN nor ADMIN_TOKENS is set, so the dashboard is closed. Set one and restart hookrun.'),
        503,
      );
    const refusal = c.req.method === 'POST' ? crossSiteRefusal(c, deps.config.publicUrl) : undefined;
    if (refusal !== undefined) return page(c, messagePage('Forbidden', refusal), 403);
    await next();
  });
  addLoginRoutes(app, deps);
  // Everything below needs a session; POSTs also need its CSRF token.
  app.use('*', async (c, next) => {
    const current = await session(c, deps);
    if (!current) return c.redirect('/admin/login', 303);
    if (c.req.method === 'POST' && !csrfTokenMatches(await formField(c, 'csrf'), current.value, current.operator)) {
      return page(c, messagePage('Forbidden', 'The form is stale or was not sent by this dashboard; reload the page and try again.'), 403);
    }
    c.set('signedIn', { name: current.operator.name, role: current.operator.role, via: 'console' });
    await next();
  });
  app.use('*', showSignedIn());
  app.use(
    '*',
    guardActions({
      db: deps.db,
      now: () => deps.clock.now(),
      log: deps.log,
      actions: CONSOLE_ACTIONS,
      openToViewers: ['POST /logout'],
      refuse: (c, message) => page(c, messagePage('Not allowed', message, csrfOf(c, deps)), 403),
      failureOf: pageError,
    }),
  );
  app.post('/logout', async (c) => {
    const value = getCookie(c, SESSION_COOKIE)!;
    // Remembered until the session would have expired, so a copied cookie stops working too.
    await revokeSession(deps.db, value, new Date(Number(value.split('.')[0]) * 1000), new Date(deps.clock.now()));
    deleteCookie(c, SESSION_COOKIE, { path: '/admin' });
    return c.redirect('/admin/login', 303);
  });
  // Each page group registers its own routes (all behind the guard above).
  addOverviewRoute(app, deps);
  addEventRoutes(app, deps);
  addMirrorRoutes(app, deps);
  addJobRoutes(app, deps);
  addHandlerControlRoutes(app, deps);
  addSenderPages(app, deps);
  addIssuePages(app, deps);
  addReplayPages(app, deps);
  addAuditPage(app, deps);
  addHandlerPages(app, deps);
  addJobPages(app, deps);
  addSettingsPage(app, deps);
  addLiveRoutes(app, deps);
  return app;
}

/** The request's session and its operator, when it is signed with their token, not expired, and not logged out (on any instance). */
async function session(c: Context, deps: AdminApiDeps): Promise<{ value: string; operator: Operator } | undefined> {
  const value = getCookie(c, SESSION_COOKIE);
  const operator = sessionOperator(value, deps.config.operators, deps.clock.now());
  if (!value || !operator) return undefined;
  return (await isSessionRevoked(deps.db, value)) ? undefined : { value, operator };
}

function addLoginRoutes(app: Hono, deps: AdminApiDeps): void {
  const { clock } = deps;
  const throttle = deps.credentials ?? new CredentialThrottle();
  app.get('/login', async (c) => ((await session(c, deps)) ? c.redirect('/admin', 303) : page(c, loginPage())));
  app.post('/login', async (c) => {
    const client = socketAddress(c);
    // A blocked address is refused before its token is read: the right token gets the same 429 as a wrong one.
    const block = await throttle.admit(client, () => clock.now());
    if (block) {
      c.header('retry-after', String(retryAfterSeconds(block)));
      return page(c, loginPage(blockMessage(block)), 429);
    }
    const operator = operatorByToken(deps.config.operators, await formField(c, 'token'));
    const right = operator !== undefined;
    const heldBlock = throttle.settle(client, clock.now(), right ? 'right' : 'wrong'); // only without an address: checked first
    if (heldBlock) {
      c.header('retry-after', String(retryAfterSeconds(heldBlock)));
      return page(c, loginPage(blockMessage(heldBlock, true)), 429);
    }
    if (!operator) return page(c, loginPage('That is not the ADMIN_TOKEN, nor a token of ADMIN_TOKENS.'), 401);
    setCookie(c, SESSION_COOKIE, createSession(operator, clock.now()), {
      path: '/admin',
      httpOnly: true,
      sameSite: 'Strict',
      secure: isHttps(c),
      maxAge: SESSION_SECONDS,
    });
    return c.redirect('/admin', 303);
  });
}
