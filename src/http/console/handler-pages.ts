import type { Context, Hono } from 'hono';
import { recentHandlerDeliveries, recentHandlerFailures, type HandlerDeliveryRow, type HandlerFailureRow } from '../../db/handler-history.js';
import { NO_FLOW } from '../../flow/describe.js';
import { listHandlerOverviews, waitingSummary, type HandlerOverview } from '../../inbox/handler-overview.js';
import type { AdminApiDeps } from '../admin.js';
import { catalogOf } from '../handler-routes.js';
import { html, type SafeHtml } from '../html.js';
import { countLink, handlerButton, handlerNotice, handlersTable, handlerState, parkedLink } from './handlers.js';
import { flash, type Flash } from './flash.js';
import { csrfOf, page } from './http.js';
import { layout, messagePage, status, when } from './layout.js';

/** Rows each of the handler page's tables shows: a bad night's failures are a link away, not a page ten screens long. */
const RECENT = 10;

/** An error's first line, cut to one line of its cell (the full text in its title and on the event's page). */
const errorCell = (error: string | null | undefined, wide = '') =>
  html`<td class="clip rest${wide}" title="${error ?? ''}">${error?.split('\n', 1)[0]!.slice(0, 300) ?? ''}</td>`;

/** "Showing the latest N: all of them →", when a table is cut at RECENT rows. */
const more = (rows: unknown[], href: string, what: string) =>
  rows.length >= RECENT ? html`<p class="more">The latest ${RECENT} shown · <a href="${href}">all ${what} →</a></p>` : '';

function deliveriesTable(h: HandlerOverview, rows: HandlerDeliveryRow[], now: number): SafeHtml {
  if (rows.length === 0) return html`<p>No deliveries yet.</p>`;
  return html`<div class="scroll"><table id="deliveries"><thead><tr><th>event</th><th class="wide">type</th><th class="wide">key</th><th>status</th><th class="wide">attempts</th><th>run after / finished</th><th class="wide">last error</th></tr></thead><tbody>
${rows.map((d) => html`<tr><td class="id"><a href="/admin/events/${d.eventId}">${d.eventId}</a></td><td class="wide clip" title="${d.type ?? ''}">${d.type ?? ''}</td><td class="wide clip" title="${d.flowKey ?? ''}"><code>${d.flowKey ?? ''}</code></td><td>${status(d.status)}</td><td class="num wide">${d.attempts}</td><td class="nowrap">${when(d.finishedAt ?? d.runAfter, now)}</td>${errorCell(d.lastError, ' wide')}</tr>`)}
</tbody></table></div>${more(rows, `/admin/events?handler=${encodeURIComponent(h.name)}`, 'its events')}`;
}

function failuresTable(h: HandlerOverview, rows: HandlerFailureRow[], now: number): SafeHtml {
  if (rows.length === 0) return html`<p>No failed attempts recorded.</p>`;
  return html`<div class="scroll"><table id="failures"><thead><tr><th>event</th><th class="wide">type</th><th>attempt</th><th>when</th><th>outcome</th><th>error</th></tr></thead><tbody>
${rows.map((f) => html`<tr><td class="id"><a href="/admin/events/${f.eventId}">${f.eventId}</a></td><td class="wide clip" title="${f.type ?? ''}">${f.type ?? ''}</td><td class="num">${f.attempt}</td><td class="nowrap">${when(f.startedAt, now)}</td><td>${status(f.outcome)}</td>${errorCell(f.error)}</tr>`)}
</tbody></table></div>${more(rows, `/admin/events?handler=${encodeURIComponent(h.name)}&status=${h.dead > 0 ? 'dead' : 'failed'}`, `its ${h.dead > 0 ? 'dead' : 'failed'} events`)}`;
}

/** What a person needs about one handler: its options and state, what its deliveries wait for, what it did and where it failed. */
export function handlerPage(
  h: HandlerOverview,
  detail: { deliveries: HandlerDeliveryRow[]; failures: HandlerFailureRow[] },
  csrf: string,
  now: number,
  message?: Flash,
): string {
  const reasons = Object.entries(h.waiting).filter(([, n]) => n > 0);
  const body = html`${flash(message)}<p><a href="/admin/handlers">← All handlers</a> · <a href="/admin/events?handler=${encodeURIComponent(h.name)}">its events</a></p>
<div id="handler-region" data-live-region><dl id="handler">
<dt>state</dt><dd id="handler-state">${handlerState(h)} ${handlerButton(h, csrf, 'detail')}</dd>
<dt>flow options</dt><dd>${h.flow ?? NO_FLOW}</dd><dt>loaded</dt><dd>${h.registered ? 'yes' : 'no: this hookrun no longer runs it; its records remain'}</dd>
<dt>running</dt><dd>${countLink(h, 'running', h.running)}</dd><dt>waiting</dt><dd>${waitingSummary(h.waiting)}${reasons.length > 0 ? html`<ul>${reasons.map(([r, n]) => html`<li>${r}: ${n}</li>`)}</ul>` : ''}
${h.topWaitingKeys.length > 0 ? html`<small>most waiting: ${h.topWaitingKeys.map((k) => `${k.key} (${k.waiting})`).join(', ')}</small>` : ''}</dd>
<dt>failed (will retry)</dt><dd>${countLink(h, 'failed', h.failed)}</dd><dt>parked</dt><dd>${parkedLink(h)}</dd><dt>dead</dt><dd>${countLink(h, 'dead', h.dead)}</dd></dl>
<h2>Recent failures</h2>${failuresTable(h, detail.failures, now)}
<h2>Recent deliveries</h2>${deliveriesTable(h, detail.deliveries, now)}</div>`;
  return layout(`Handler ${h.name}`, body, csrf, undefined, 'handlers');
}

const overviews = async (deps: AdminApiDeps, topKeys: number) => listHandlerOverviews(deps.db, await catalogOf(deps.handlers), deps.clock.now(), { topKeys });

/** GET /admin/handlers and /admin/handlers/{name}. */
export function addHandlerPages(app: Hono, deps: AdminApiDeps): void {
  app.get('/handlers', async (c) => {
    const handlers = await overviews(deps, 3);
    const body = html`${flash(handlerNotice(c.req.query('handler'), c.req.query('did'), handlers))}
<p>Each handler this hookrun runs: its flow options, what its deliveries wait for, and Pause / Resume (on every instance).</p>${handlersTable(handlers, csrfOf(c, deps))}`;
    return page(c, layout('Handlers', body, csrfOf(c, deps), undefined, 'handlers'));
  });
  app.get('/handlers/:name', (c) => oneHandler(c, deps));
}

async function oneHandler(c: Context, deps: AdminApiDeps): Promise<Response> {
  const name = c.req.param('name') ?? '';
  const handlers = await overviews(deps, 5);
  const handler = handlers.find((h) => h.name === name);
  if (!handler) {
    const names = handlers.map((h) => h.name).join(', ') || 'none';
    return page(c, messagePage('Not found', `No handler "${name.slice(0, 100)}". Handlers: ${names}.`, csrfOf(c, deps)), 404);
  }
  const [deliveries, failures] = await Promise.all([recentHandlerDeliveries(deps.db, name, RECENT), recentHandlerFailures(deps.db, name, RECENT)]);
  const message = handlerNotice(c.req.query('handler'), c.req.query('did'), handlers);
  return page(c, handlerPage(handler, { deliveries, failures }, csrfOf(c, deps), deps.clock.now(), message));
}
