import type { Context, Hono } from 'hono';
import { html, type SafeHtml } from '../html.js';
import { AppError } from '../../errors.js';
import { getEvent, listAttempts } from '../../db/events.js';
import { replayEvent, replayEventsByStatus } from '../../inbox/replay.js';
import type { AdminApiDeps } from '../admin.js';
import { csrfOf, formField, page, SECURITY_HEADERS } from './http.js';
import { messagePage } from './layout.js';
import type { EventAttempt, EventDetail, EventSummary } from '../../db/events.js';
import { layout, status, when } from './layout.js';

/** The events list's filters, as the query string carries them. */
export interface ListFilter {
  status?: string;
  source?: string;
  type?: string;
  q?: string;
  live?: string;
  parked?: string;
}

export function filterLink(filter: ListFilter, change: Partial<ListFilter> & { cursor?: number }): string {
  const params = new URLSearchParams();
  const merged = { ...filter, ...change };
  for (const [key, value] of Object.entries(merged)) if (value !== undefined && value !== '') params.set(key, String(value));
  const query = params.toString();
  return query ? `/admin?${query}` : '/admin';
}

export function eventsTable(events: EventSummary[], filtered: boolean, now: number): SafeHtml {
  if (events.length === 0)
    return filtered
      ? html`<p>No events match these filters. <a href="/admin">Clear them</a>.</p>`
      : html`<p>No events yet. Send one with <code>hookrun send auth user.created</code>.</p>`;
  return html`<div class="scroll"><table id="events"><thead><tr><th>id</th><th>received (UTC)</th><th class="wide">source</th><th>type</th><th>status</th><th class="wide">attempts</th><th class="wide">last error</th></tr></thead><tbody>
${events.map((e) => html`<tr data-event-id="${e.id}"><td><a href="/admin/events/${e.id}">${e.id}</a></td><td>${when(e.receivedAt, now)}</td><td class="wide">${e.source}</td><td><a href="/admin/events/${e.id}">${e.type}</a></td><td>${status(e.status)}</td><td class="num wide">${e.attempts}</td><td class="wide">${e.lastError ? e.lastError.slice(0, 120) : ''}</td></tr>`)}
</tbody></table></div>`;
}

export function searchForm(filter: ListFilter): SafeHtml {
  const keep = (['status', 'source', 'live'] as const).map((k) => (filter[k] ? html`<input type="hidden" name="${k}" value="${filter[k]}">` : ''));
  return html`<form class="search" method="get" action="/admin" role="search">${keep}
<input type="search" name="q" value="${filter.q ?? ''}" placeholder="id, key (evt_…, msg_…) or type prefix" aria-label="search" size="32">
<input type="text" name="type" value="${filter.type ?? ''}" placeholder="exact type, e.g. invoice.paid" aria-label="type" size="24">
<button type="submit">Search</button>${filter.q || filter.type ? html` <a href="${filterLink(filter, { q: undefined, type: undefined })}">clear</a>` : ''}</form>`;
}

function attemptsTable(history: EventAttempt[], now: number): SafeHtml {
  if (history.length === 0) return html`<p>Not processed yet.</p>`;
  return html`<div class="scroll"><table id="attempts"><thead><tr><th>#</th><th>handler</th><th>started (UTC)</th><th>ms</th><th>outcome</th><th>error</th></tr></thead><tbody>
${history.map((a) => html`<tr><td class="num">${a.attempt}</td><td>${a.handler ?? ''}</td><td>${when(a.startedAt, now)}</td><td class="num">${a.durationMs}</td><td>${status(a.outcome)}</td><td>${a.error ?? ''}</td></tr>`)}
</tbody></table></div>`;
}

/** With several handlers on the event: which to run again (all, or one by name). */
function handlerChoice(history: EventAttempt[]): SafeHtml | string {
  const names = [...new Set(history.map((a) => a.handler).filter((h): h is string => h !== null))].sort();
  if (names.length < 2) return '';
  return html` <select name="handler" aria-label="handler"><option value="">all</option>${names.map((n) => html`<option value="${n}">only ${n}</option>`)}</select>`;
}

/** What a replay led to, read from the event as it is now (the worker may already have run it). */
export function replayOutcome(event: EventDetail): string {
  if (event.status === 'pending' || event.status === 'processing') return `Replayed: back in the queue (now ${event.status}). Reload to see how it ends.`;
  if (event.status === 'processed' || event.status === 'ignored') return `Replayed: it ran again and is ${event.status}.`;
  return `Replayed, but it ran again and is ${event.status}: ${event.lastError ?? 'no message'}`;
}

/** One event: its fields, last error, a replay button and the payload (folded, with a raw JSON link). */
export function eventPage(event: EventDetail, history: EventAttempt[], csrf: string, now: number, notice?: string): string {
  const payload = JSON.stringify(event.payload, null, 2);
  const failedAgain = notice !== undefined && (event.status === 'dead' || event.status === 'failed');
  const body = html`${notice ? html`<p class="${failedAgain ? 'error' : 'notice'}" role="status">${notice}</p>` : ''}
<h2>Event ${event.id}</h2><dl>
<dt>source</dt><dd>${event.source}</dd><dt>type</dt><dd>${event.type}</dd><dt>key</dt><dd><code>${event.key}</code></dd>
<dt>status</dt><dd id="event-status">${status(event.status)}</dd><dt>attempts</dt><dd>${event.attempts}</dd>
<dt>received</dt><dd>${when(event.receivedAt, now)}</dd><dt>next attempt</dt><dd>${when(event.nextAttemptAt, now)}</dd><dt>processed</dt><dd>${when(event.processedAt, now)}</dd>
<dt>last error</dt><dd>${event.lastError ?? '-'}</dd></dl>
<h2>Attempts</h2>${attemptsTable(history, now)}
<form method="post" action="/admin/events/${event.id}/replay"><input type="hidden" name="csrf" value="${csrf}"><p><button type="submit">Replay</button>${handlerChoice(history)} puts it back in the queue (handlers are idempotent).</p></form>
<details open id="payload-box"><summary><b>Payload</b> (${Buffer.byteLength(payload)} bytes as shown) · <a href="/admin/events/${event.id}/payload.json">raw JSON</a> (to copy or save)</summary><pre id="payload">${payload}</pre></details>`;
  return layout(`Event ${event.id}`, body, csrf);
}

const eventId = (c: Context) => (/^\d{1,15}$/.test(c.req.param('id') ?? '') ? Number(c.req.param('id')) : 0);

/** GET /admin/events/{id} (and its payload), POST replays. */
export function addEventRoutes(app: Hono, deps: AdminApiDeps): void {
  const { db, clock } = deps;
  app.get('/events/:id', async (c) => {
    const event = await getEvent(db, eventId(c));
    if (!event) return page(c, messagePage('Not found', `No event with id ${c.req.param('id')}.`, csrfOf(c, deps)), 404);
    return page(
      c,
      eventPage(event, await listAttempts(db, event.id), csrfOf(c, deps), clock.now(), c.req.query('replayed') === '1' ? replayOutcome(event) : undefined),
    );
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
