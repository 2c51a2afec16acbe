import { html, type SafeHtml } from '../html.js';
import type { EventSummary } from '../../db/events.js';
import { status, when } from './layout.js';

/** The events list's filters, as the query string carries them. */
export interface ListFilter {
  status?: string;
  source?: string;
  type?: string;
  q?: string;
  live?: string;
  parked?: string;
}

/** A link to the overview's events list with one filter changed. */
export function filterLink(filter: ListFilter, change: Partial<ListFilter> & { cursor?: number }): string {
  const params = new URLSearchParams();
  const merged = { ...filter, ...change };
  for (const [key, value] of Object.entries(merged)) if (value !== undefined && value !== '') params.set(key, String(value));
  const query = params.toString();
  return query ? `/admin?${query}` : '/admin';
}

/** The overview's events table (the full list, with filters and selection, is /admin/events). */
export function eventsTable(events: EventSummary[], filtered: boolean, now: number): SafeHtml {
  if (events.length === 0)
    return filtered
      ? html`<p>No events match these filters. <a href="/admin">Clear them</a>.</p>`
      : html`<p>No events yet. Send one with <code>hookrun send auth user.created</code>.</p>`;
  return html`<div class="scroll"><table id="events"><thead><tr><th>id</th><th>received (UTC)</th><th class="wide">source</th><th>type</th><th>status</th><th class="wide">attempts</th><th class="wide">last error</th></tr></thead><tbody>
${events.map((e) => html`<tr data-event-id="${e.id}"><td><a href="/admin/events/${e.id}">${e.id}</a></td><td>${when(e.receivedAt, now)}</td><td class="wide">${e.source}</td><td><a href="/admin/events/${e.id}">${e.type}</a></td><td>${status(e.status)}</td><td class="num wide">${e.attempts}</td><td class="wide">${e.lastError ? e.lastError.slice(0, 120) : ''}</td></tr>`)}
</tbody></table></div>`;
}

/** The overview's id/key/type search. */
export function searchForm(filter: ListFilter): SafeHtml {
  const keep = (['status', 'source', 'live'] as const).map((k) => (filter[k] ? html`<input type="hidden" name="${k}" value="${filter[k]}">` : ''));
  return html`<form class="search" method="get" action="/admin" role="search">${keep}
<input type="search" name="q" value="${filter.q ?? ''}" placeholder="id, key (evt_…, msg_…) or type prefix" aria-label="search" size="32">
<input type="text" name="type" value="${filter.type ?? ''}" placeholder="exact type, e.g. invoice.paid" aria-label="type" size="24">
<button type="submit">Search</button>${filter.q || filter.type ? html` <a href="${filterLink(filter, { q: undefined, type: undefined })}">clear</a>` : ''}</form>`;
}
