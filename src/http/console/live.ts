import type { Hono } from 'hono';
import { AppError } from '../../errors.js';
import type { AdminApiDeps } from '../admin.js';
import { csrfOf, page, SECURITY_HEADERS } from './http.js';
import { messagePage } from './layout.js';
import { CONSOLE_SCRIPT } from './live-script.js';

/**
 * `GET /admin/stream`: the admin API's event stream (the same handler as
 * `GET /api/events/stream`) behind the console's session, so a logged-in
 * page can listen without the token; `GET /admin/assets/console.js`: the
 * script that listens. A 404 page when this hookrun serves no stream.
 */
export function addLiveRoutes(app: Hono, deps: AdminApiDeps): void {
  app.get('/stream', async (c) => {
    if (!deps.eventStream)
      return page(c, messagePage('Not found', 'This hookrun does not serve the event stream, so pages do not update live.', csrfOf(c, deps)), 404);
    try {
      return await deps.eventStream.handle(c, 'console');
    } catch (error) {
      if (error instanceof AppError) return page(c, messagePage('Not available', error.message, csrfOf(c, deps)), error.status);
      throw error;
    }
  });
  app.get('/assets/console.js', (c) =>
    c.body(CONSOLE_SCRIPT, 200, { ...SECURITY_HEADERS, 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-cache' }),
  );
}
