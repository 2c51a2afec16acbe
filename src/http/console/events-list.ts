import { DELIVERY_STATUSES, EVENT_STATUSES, type EventOrder, type EventSummary } from '../../db/events.js';
import { html, trusted, type SafeHtml } from '../html.js';
import { eventsUrl, filterSearch, localInput, type FilterQuery } from './events-filter.js';
import { layout, status, when } from './layout.js';

/** What the events list page shows. */
export interface EventListView {
  query: FilterQuery;
  /** Invalid filters, each said in one line (the list is not run while there are any). */
  errors: string[];
  /** A search the search index answers, in its structured form (`payload:cus_123`), and whether the event's key is searched too. */
  shown?: { text: string; orKey: boolean };
  events: EventSummary[];
  /** How the page is sorted, said in its header. */
  order: EventOrder;
  nextCursor: number | undefined;
  /** A payload search that stopped at its time budget: the events it read went down to this id. */
  searchedTo?: number;
  /** How long a search that reads payloads took (ms; 0 for any other list): a slow one is not refreshed live (each refresh would run it again). */
  tookMs: number;
  /** The sources a person can pick (the receivers of this hookrun). */
  sources: readonly string[];
  /** The project's handlers, for the handler select. */
  handlers: readonly string[];
  now: number;
  csrf: string;
}

/** A list slower than this is not refreshed live: each refresh would run its search again. */
export const SLOW_LIST_MS = 300;

/** Whether the list stands still: a payload search that took long or stopped at its budget. */
const stands = (view: EventListView) => view.tookMs > SLOW_LIST_MS || view.searchedTo !== undefined;

/** Why a slow list stands still, and how far a payload search read. */
function slowNotice(view: EventListView): SafeHtml {
  const read =
    view.searchedTo === undefined
      ? ''
      : html` It read the events down to #${view.searchedTo}; narrow it with a time range or search for an id or email (indexed).`;
  return html`<p class="notice" id="slow-search" role="status">This search took ${Math.round(view.tookMs)} ms, so the list is not refreshed live: <a href="">refresh</a> to run it again.${read}</p>`;
}

/**
 * On a phone the list leads: status, type with the error's first line under
 * it, received, id; the rest go (their values are on the event's page), and
 * the filters fold behind one summary. On a wide screen the filters stay open.
 */
const STYLE = html`<style>
#filter-box{margin:0 0 8px}#filter-box>summary{cursor:pointer;padding:6px 10px;background:#fff;border:1px solid #e5e7eb;font-weight:600}
#filter-box>summary small{font-weight:400;color:#374151}#events .err1{display:none;color:#991b1b;font-size:12px}
@media (min-width:641px){#filter-box>summary{display:none}#filter-box::details-content{content-visibility:visible;height:auto}}
#events-page .filters{display:grid;grid-template-columns:repeat(auto-fill,minmax(170px,1fr));gap:6px 12px;background:#fff;padding:10px;border:1px solid #e5e7eb}
#events-page .filters label{display:flex;flex-direction:column;font-size:12px;color:#374151}#events-page .filters input,#events-page .filters select{font-size:14px;padding:3px 6px;min-width:0}
#events-page .filters .wide-field{grid-column:1/-1}#events-page .ranges{display:flex;gap:10px;align-items:center;flex-wrap:wrap}
#events td.sel,#events th.sel{width:1.5em}
#events-page .actions{display:flex;gap:12px;flex-wrap:wrap;align-items:center;margin:8px 0}
@media (max-width:640px){#events td,#events th{font-size:13px}#events .err1{display:block}#events td.type{max-width:0;width:100%}}
</style>`;

function option(value: string, selected: string | undefined, label = value): SafeHtml {
  return value === selected ? html`<option value="${value}" selected>${label}</option>` : html`<option value="${value}">${label}</option>`;
}

function select(name: string, label: string, values: readonly string[], selected: string | undefined): SafeHtml {
  return html`<label>${label}<select name="${name}"><option value="">any</option>${values.map((v) => option(v, selected))}</select></label>`;
}

/** The 1 h / 24 h / 7 d links: the current filters with `from` that long before now and no `to`. */
function ranges(query: FilterQuery, now: number): SafeHtml {
  const spans: Array<[string, number]> = [
    ['1 h', 3_600_000],
    ['24 h', 86_400_000],
    ['7 d', 604_800_000],
  ];
  return html`<span class="ranges">Last ${spans.map(([label, ms]) => html`<a href="${eventsUrl({ ...query, from: localInput(new Date(now - ms)), to: undefined })}">${label}</a> `)}</span>`;
}

/** Every filter in one GET form, so the URL (and the back button) holds them. */
function filterForm(view: EventListView): SafeHtml {
  const q = view.query;
  const handlers = q.handler && !view.handlers.includes(q.handler) ? [...view.handlers, q.handler] : view.handlers;
  const active = filterSearch(q) === '' ? 'none' : describeFilters(q);
  return html`<details id="filter-box"${active === 'none' ? '' : trusted(' open')}><summary>Filters <small>(${active})</small></summary><form class="filters" method="get" action="/admin/events" role="search">
${select('source', 'source', view.sources, q.source)}
<label>type<input type="text" name="type" value="${q.type ?? ''}" placeholder="invoice.paid"></label>
${select('status', 'status', q.handler ? DELIVERY_STATUSES : EVENT_STATUSES, q.status)}
${select('handler', 'handler', handlers, q.handler)}
<label>from (UTC)<input type="datetime-local" name="from" value="${q.from ?? ''}"></label>
<label>to (UTC)<input type="datetime-local" name="to" value="${q.to ?? ''}"></label>
<label>id, key, type prefix, or an id or email in the payload<input type="search" name="q" value="${q.q ?? ''}" placeholder="42, evt_…, invoice., cus_…, a@b.com"></label>
<label class="wide-field">payload at a path (path = value, or path ~ text)<input type="text" name="where" value="${q.where ?? ''}" placeholder="data.object.customer = cus_123"></label>
${q.parked ? html`<input type="hidden" name="parked" value="${q.parked}">` : ''}
<span class="ranges"><button type="submit">Filter</button> <a href="/admin/events">clear</a> ${ranges(q, view.now)}</span>
</form></details>`;
}

/** The active filters in a few words, for the folded filters' summary. */
const describeFilters = (q: FilterQuery) =>
  Object.entries(q)
    .filter(([, value]) => value)
    .map(([name, value]) => `${name} ${String(value).slice(0, 40)}`)
    .join(', ');

function row(e: EventSummary, now: number): SafeHtml {
  const link = `/admin/events/${e.id}`;
  const error = e.lastError ? e.lastError.split('\n', 1)[0]!.slice(0, 300) : '';
  return html`<tr data-event-id="${e.id}"><td class="sel"><input type="checkbox" name="ids" value="${e.id}" form="replay-selection" aria-label="select event ${e.id}"></td><td>${status(e.status)}</td>
<td class="type clip" title="${e.type}"><a href="${link}">${e.type}</a>${error ? html`<span class="err1 clip-line" title="${e.lastError ?? ''}">${error}</span>` : ''}</td><td class="nowrap">${when(e.receivedAt, now)}</td><td class="id"><a href="${link}">${e.id}</a></td>
<td class="wide clip src" title="${e.source}">${e.source}</td><td class="num wide">${e.attempts}</td><td class="wide clip rest" title="${e.lastError ?? ''}">${error}</td></tr>`;
}

/** The events table: a checkbox (for a bulk replay), status, type (the error's first line under it on a phone), received, id; source, attempts and last error when there is room. */
export function eventRows(events: EventSummary[], now: number): SafeHtml {
  return html`<table id="events"><thead><tr><th class="sel" aria-label="select"></th><th>status</th><th>type</th><th>received (UTC)</th><th>id</th><th class="wide">source</th><th class="wide">attempts</th><th class="wide">last error</th></tr></thead><tbody>
${events.map((e) => row(e, now))}
</tbody></table>`;
}

/** The list's header: how it is sorted, and a pasted id or email said back in the form that searches it. */
function listHeader(view: EventListView): SafeHtml {
  const order =
    view.order === 'received' ? html`Newest received first.` : html`Newest stored first (a payload search reads the events in the order they were stored).`;
  const shown = view.shown
    ? html` Showing <code>${view.shown.text}</code>: the events whose payload holds it${view.shown.orKey ? ', and the event with that key' : ''}.`
    : '';
  return html`<p id="list-order">${order}${shown}</p>`;
}

function results(view: EventListView): SafeHtml {
  if (view.errors.length > 0) return html`${view.errors.map((e) => html`<p class="error" role="alert">${e}</p>`)}<p>Fix the filter above to see events.</p>`;
  const filtered = filterSearch(view.query) !== '';
  if (view.events.length === 0)
    return filtered
      ? html`${view.shown ? listHeader(view) : ''}<p>No events match these filters. <a href="/admin/events">Clear them</a>.</p>`
      : html`<p>No events yet. Send one with <code>hookrun send auth user.created</code>.</p>`;
  const all = filterSearch(view.query);
  return html`<form id="replay-selection" class="actions" method="get" action="/admin/replays/new"><button type="submit">Replay selected</button>
<a id="replay-matching" href="/admin/replays/new${all ? `?${all}` : ''}">Replay all matching…</a></form>
${listHeader(view)}${stands(view) ? slowNotice(view) : ''}<div id="events-region"${stands(view) ? '' : trusted(' data-live-region')}>${eventRows(view.events, view.now)}</div>
${view.nextCursor !== undefined ? html`<p><a id="older" href="${eventsUrl(view.query, { cursor: view.nextCursor })}">${view.searchedTo === undefined ? 'Older events →' : 'Search older events →'}</a></p>` : ''}`;
}

/** GET /admin/events: find events by any field, pick some to replay. */
export function eventListPage(view: EventListView): string {
  const parked = view.query.parked
    ? html`<p>Only events with a parked delivery · <a href="${eventsUrl({ ...view.query, parked: undefined })}">show all</a></p>`
    : '';
  const body = html`<div id="events-page">${STYLE}${filterForm(view)}${parked}${results(view)}</div>`;
  return layout('Events', body, view.csrf, undefined, 'events');
}
