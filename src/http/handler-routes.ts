import type { Hono } from 'hono';
import type { Database } from '../db/database.js';
import { listHandlerOverviews, pauseHandler, resumeHandler, type HandlerCatalog } from '../inbox/handler-overview.js';
import type { Logger } from '../log.js';

/** The handlers this hookrun runs, loaded when first asked for (the CLI loads a project's handler files only for these routes). */
export type HandlerCatalogSource = () => Promise<HandlerCatalog>;

/** With no handlers given (an app built without a worker's registry): no name is known, recorded ones are still listed. */
const NO_HANDLERS: HandlerCatalog = { names: () => [], byName: () => undefined };

/** The catalog to read: the given one, or none. */
export const catalogOf = (source: HandlerCatalogSource | undefined): Promise<HandlerCatalog> => (source ? source() : Promise.resolve(NO_HANDLERS));

/**
 * `GET /api/handlers` (each handler's flow options, what its deliveries wait
 * for, the top 5 waiting keys) and `POST /api/handlers/{name}/pause|resume`,
 * for `hookrun handlers` while a server holds the embedded database. Behind
 * the admin API's bearer check like every route under `/api`.
 */
export function addHandlerRoutes(app: Hono, deps: { db: Database; handlers?: HandlerCatalogSource; now: () => number; log: Logger }): void {
  const { db } = deps;
  app.get('/handlers', async (c) => c.json({ handlers: await listHandlerOverviews(db, await catalogOf(deps.handlers), deps.now(), { topKeys: 5 }) }));

  app.post('/handlers/:name/pause', async (c) => {
    const state = await pauseHandler(db, await catalogOf(deps.handlers), c.req.param('name'), deps.now());
    deps.log.info({ handler: state.handler, changed: state.changed }, 'handler paused by the admin API');
    return c.json(state);
  });

  app.post('/handlers/:name/resume', async (c) => {
    const state = await resumeHandler(db, await catalogOf(deps.handlers), c.req.param('name'), deps.now());
    deps.log.info({ handler: state.handler, changed: state.changed }, 'handler resumed by the admin API');
    return c.json(state);
  });
}
