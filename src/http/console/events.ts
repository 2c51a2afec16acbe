import type { Context, Hono } from 'hono';
import { AppError } from '../../errors.js';
import { getEventRequest } from '../../db/event-requests.js';
import { listEventDeliveries } from '../../db/event-history.js';
import { handlerControlStates } from '../../flow/controls.js';
import { indexedMatch } from '../../db/event-filter.js';
import { getEvent, listAttempts, listEvents, type EventDetail } from '../../db/events.js';
import { describeFlow } from '../../flow/describe.js';
import { replayEvent, replayEventsByStatus } from '../../inbox/replay.js';
import { knownSources } from '../known-sources.js';
import type { AdminApiDeps } from '../admin.js';
import { catalogOf } from '../handler-routes.js';
import { eventDetailPage } from './events-detail.js';
import { toneOfStatus, type Flash } from './flash.js';
import { eventFilterOf, filterQueryOf } from './events-filter.js';
import { eventListPage } from './events-list.js';
import { csrfOf, formField, page, SECURITY_HEADERS } from './http.js';
import { actorOf, noteAudit } from '../audit-trail.js';
import { messagePage } from './layout.js';

/** What a replay led to, read from the event as it is now (the worker may already have run it). */
export function replayOutcome(event: EventDetail): Flash {
  if (event.status === 'pending') return { text: `Replayed: back in the queue (now ${event.status}). Reload to see how it ends.`, tone: 'info' };
  if (event.status === 'processed' || event.status === 'ignored') return { text: `Replayed: it ran again and is ${event.status}.`, tone: 'success' };
  return { text: `Replayed, but it ran again and is ${event.status}: ${event.lastError ?? 'no message'}`, tone: toneOfStatus(event.status) };
}

const eventId = (c: Context) => (/^\d{1,15}$/.test(c.req.param('id') ?? '') ? Number(c.req.param('id')) : 0);

/** GET /admin/events: the list, every filter in the query string; an invalid filter is said, not a 500. */
async function listRoute(c: Context, deps: AdminApiDeps): Promise<Response> {
  const { filter, errors, query, shown } = eventFilterOf(filterQueryOf((name) => c.req.query(name)));
  const cursor = /^\d{1,15}$/.test(c.req.query('cursor') ?? '') ? Number(c.req.query('cursor')) : undefined;
  const catalog = await catalogOf(deps.handlers);
  const started = performance.now();
  const list =
    errors.length === 0
      ? await listEvents(deps.db, { ...filter, before: cursor, limit: 50 }, { ingest: deps.ingest })
      : { events: [], nextCursor: undefined, order: 'received' as const };
  // A search that reads payloads and took a while is not rerun by live refreshes; everything else stays live.
  const scanned = filter.where !== undefined && !indexedMatch(filter.where);
  const tookMs = scanned ? performance.now() - started : 0;
  const view = {
    query,
    errors,
    shown,
    ...list,
    tookMs,
    sources: knownSources(deps.config),
    handlers: [...catalog.names()].sort(),
    now: deps.clock.now(),
    csrf: csrfOf(c, deps),
  };
  return page(c, eventListPage(view), errors.length > 0 ? 400 : 200);
}

/** GET /admin/events/{id}: the event, what to do next, its request, its attempts by handler and run. */
async function detailRoute(c: Context, deps: AdminApiDeps): Promise<Response> {
  const { db, clock } = deps;
  const event = await getEvent(db, eventId(c));
  if (!event) return page(c, messagePage('Not found', `No event with id ${c.req.param('id')}.`, csrfOf(c, deps)), 404);
  const [attempts, deliveries, request, controls, catalog] = [
    await listAttempts(db, event.id),
    await listEventDeliveries(db, event.id),
    await getEventRequest(db, event.id),
    await handlerControlStates(db),
    await catalogOf(deps.handlers),
  ];
  const handlers = deliveries.map((d) => {
    const plan = catalog.byName(d.handler)?.flow;
    return {
      name: d.handler,
      paused: controls.some((s) => s.handler === d.handler && s.paused),
      flow: plan ? describeFlow(plan) : null,
      loaded: catalog.names().includes(d.handler),
    };
  });
  const notice = c.req.query('replayed') === '1' ? replayOutcome(event) : undefined;
  const view = { event, attempts, deliveries, request, handlers, maxAttempts: deps.config.maxAttempts, csrf: csrfOf(c, deps), now: clock.now(), notice };
  return page(c, eventDetailPage(view));
}

/** GET /admin/events (the list) and /admin/events/{id} (and its payload), POST replays. */
export function addEventRoutes(app: Hono, deps: AdminApiDeps): void {
  const { db, clock } = deps;
  app.get('/events', (c) => listRoute(c, deps));
  app.get('/events/:id', (c) => detailRoute(c, deps));

  app.get('/events/:id/payload.json', async (c) => {
    const event = await getEvent(db, eventId(c));
    if (!event) return page(c, messagePage('Not found', `No event with id ${c.req.param('id')}.`, csrfOf(c, deps)), 404);
    return c.json(event.payload as object, 200, { ...SECURITY_HEADERS, 'content-disposition': `inline; filename="event-${event.id}.json"` });
  });

  app.post('/events/replay', async (c) => {
    const status = await formField(c, 'status');
    if (!status) return page(c, messagePage('Bad request', 'Say which status to replay.', csrfOf(c, deps)), 400);
    try {
      const count = await replayEventsByStatus(db, clock, { status }, { actor: actorOf(c) });
      noteAudit(c, `${count} events (status ${status})`);
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
      await replayEvent(db, clock, id, { handler, actor: actorOf(c) });
      if (handler !== undefined) noteAudit(c, `handler ${handler} only`);
    } catch (error) {
      if (error instanceof AppError) return page(c, messagePage('Not replayed', error.message, csrfOf(c, deps)), error.status);
      throw error;
    }
    deps.log.info({ id, handler }, 'event replayed from the dashboard');
    return c.redirect(`/admin/events/${id}?replayed=1`, 303);
  });
}
