import type { Hono } from 'hono';
import { AppError } from '../../errors.js';
import { pauseHandler, resumeHandler } from '../../inbox/handler-overview.js';
import type { AdminApiDeps } from '../admin.js';
import { messagePage } from './layout.js';
import { csrfOf, page } from './http.js';
import { catalogOf } from '../handler-routes.js';

/**
 * `POST /admin/handlers/{name}/pause|resume`: the handlers table's buttons.
 * Mounted behind the dashboard's session and CSRF guard, like the cron
 * buttons; back to the overview with a notice, or a page saying why not.
 */
export function addHandlerControlRoutes(app: Hono, deps: AdminApiDeps): void {
  for (const action of ['pause', 'resume'] as const) {
    app.post(`/handlers/:name/${action}`, async (c) => {
      const name = c.req.param('name');
      try {
        const catalog = await catalogOf(deps.handlers);
        const state = await (action === 'pause' ? pauseHandler : resumeHandler)(deps.db, catalog, name, deps.clock.now());
        const did = action === 'pause' ? 'paused' : 'resumed';
        deps.log.info({ handler: name, action, changed: state.changed }, 'handler controlled from the dashboard');
        return c.redirect(`/admin?handler=${encodeURIComponent(name)}&did=${did}`, 303);
      } catch (error) {
        if (error instanceof AppError) return page(c, messagePage('Not done', error.message, csrfOf(c, deps)), error.status);
        throw error;
      }
    });
  }
}
