import type { Hono } from 'hono';
import { actorOf, noteAudit } from './audit-trail.js';
import { countEventsByStatus } from '../db/event-counts.js';
import { eventDeliveries } from '../db/event-history.js';
import { getEventRequest } from '../db/event-requests.js';
import { getEvent, listEvents } from '../db/events.js';
import { AppError } from '../errors.js';
import { replayEvent, replayEventsByStatus } from '../inbox/replay.js';
import type { AdminApiDeps } from './admin-deps.js';
import { eventId, parse, readJson } from './admin-request.js';
import { eventListQuery, replayBody, replayQuery } from './admin-schemas.js';
import { eventListFilter } from './event-query.js';
import { checkSource, knownSources } from './known-sources.js';

/** The admin API's events: list (filters, cursor, a payload search's budget), one with its deliveries and request, counts, the stream, replay. */
export function addEventRoutes(app: Hono, deps: AdminApiDeps): void {
  const { db, clock } = deps;
  const sources = knownSources(deps.config);
  app.get('/events', async (c) => {
    const q = parse(eventListQuery, c.req.query());
    checkSource(q.source, sources);
    const page = await listEvents(db, eventListFilter(q), { ingest: deps.ingest });
    const searched = page.searchedTo === undefined ? {} : { searchedTo: String(page.searchedTo) };
    return c.json({ events: page.events, nextCursor: page.nextCursor === undefined ? null : String(page.nextCursor), ...searched });
  });

  app.get('/events/stream', (c) => {
    if (!deps.eventStream) throw new AppError('not_found', 'This hookrun does not serve the event stream.');
    return deps.eventStream.handle(c);
  });

  app.get('/events/counts', async (c) => c.json({ counts: await countEventsByStatus(db) }));

  app.get('/events/:id', async (c) => {
    const id = eventId(c);
    const event = await getEvent(db, id);
    if (!event) throw new AppError('not_found', `No event with id ${id}.`);
    return c.json({ event, ...(await eventDeliveries(db, id)), request: await getEventRequest(db, id) });
  });

  app.post('/events/replay', async (c) => {
    const { actor, ...body } = parse(replayBody, await readJson(c));
    checkSource(body.source, sources);
    const replayed = await replayEventsByStatus(db, clock, body, { actor: actorOf(c, actor) });
    noteAudit(c, `${replayed} events (${describeReplayFilter(body)})`);
    deps.log.info({ status: body.status, source: body.source, type: body.type, replayed }, 'events replayed by the admin API');
    return c.json({ replayed });
  });

  app.post('/events/:id/replay', async (c) => {
    const id = eventId(c);
    const { handler, actor, fromStart } = parse(replayQuery, c.req.query());
    await replayEvent(db, clock, id, { handler, actor: actorOf(c, actor), fromStart });
    const detail = [handler !== undefined && `handler ${handler} only`, fromStart && 'every step again'].filter(Boolean).join(', ');
    if (detail) noteAudit(c, detail);
    deps.log.info({ id, handler, fromStart }, 'event replayed by the admin API');
    return c.json({ replayed: true, event: await getEvent(db, id) });
  });
}

/** The filter of a replay by status, as the audit says it. */
const describeReplayFilter = (body: { status: string; source?: string; type?: string }) =>
  [`status ${body.status}`, body.source && `source ${body.source}`, body.type && `type ${body.type}`].filter(Boolean).join(', ');
