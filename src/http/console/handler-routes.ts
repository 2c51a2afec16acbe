import type { Hono } from 'hono';
import { AppError } from '../../errors.js';
import { pauseHandler, resumeHandler } from '../../inbox/handler-overview.js';
import type { AdminApiDeps } from '../admin.js';
import { messagePage } from './layout.js';
import { csrfOf, formField, page } from './http.js';
import { catalogOf } from '../handler-routes.js';

/**
 * `POST /admin/handlers/{name}/pause|resume`: the handler pages' buttons.
 * Mounted behind the console's session and CSRF guard, like the job
 * buttons; back to the page the button was on (the handlers list, or the
 * handler's own page) with a notice, or a page saying why not.
 */
export function addHandlerControlRoutes(app: Hono, deps: AdminApiDeps): void {
  for (const action of ['pause', 'resume'] as const) {
    app.post(`/handlers/:name/${action}`, async (c) => {
      const name = c.req.param('name');
      const back = (await formField(c, 'back')) === 'detail' ? `/admin/handlers/${encodeURIComponent(name)}` : '/admin/handlers';
      try {
        const catalog = await catalogOf(deps.handlers);
        const state = await (action === 'pause' ? pauseHandler : resumeHandler)(deps.db, catalog, name, deps.clock.now());
        const did = action === 'pause' ? 'paused' : 'resumed';
        deps.log.info({ handler: name, action, changed: state.changed }, 'handler controlled from the console');
        return c.redirect(`${back}?handler=${encodeURIComponent(name)}&did=${did}`, 303);
      } catch (error) {
        if (error instanceof AppError) return page(c, messagePage('Not done', error.message, csrfOf(c, deps)), error.status);
        throw error;
      }
    });
  }
}
