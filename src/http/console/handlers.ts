import { NO_FLOW } from '../../flow/describe.js';
import { waitingSummary, type HandlerOverview } from '../../inbox/handler-overview.js';
import { html, type SafeHtml } from '../html.js';
import type { Flash } from './flash.js';
import { time } from './layout.js';

/** Where a handler button sends the browser back to: the handlers list, or the handler's own page. */
export type HandlerBack = 'list' | 'detail';

/** A Pause or Resume button: a form with the session's CSRF token and the page to come back to. */
export function handlerAction(name: string, action: 'pause' | 'resume', csrf: string, back: HandlerBack): SafeHtml {
  return html`<form method="post" action="/admin/handlers/${encodeURIComponent(name)}/${action}" class="inline"><input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="back" value="${back}"><button data-action="${action}">${action === 'pause' ? 'Pause' : 'Resume'}</button></form>`;
}

/** The button a handler's row offers: Resume when paused, Pause when this hookrun runs it. */
export function handlerButton(h: HandlerOverview, csrf: string, back: HandlerBack): SafeHtml | string {
  return h.paused ? handlerAction(h.name, 'resume', csrf, back) : h.registered ? handlerAction(h.name, 'pause', csrf, back) : '';
}

/** "paused since …" or "active". */
export const handlerState = (h: HandlerOverview) => (h.paused ? html`<b>paused</b>${h.pausedAt ? html` since ${time(h.pausedAt)}` : ''}` : 'active');

/** The parked count, linked to those events. */
export const parkedLink = (h: HandlerOverview) =>
  h.parked > 0 ? html`<a href="/admin/events?handler=${encodeURIComponent(h.name)}&parked=1">${h.parked}</a>` : String(h.parked);

/** A count of the handler's deliveries in `status`, linked to those events (the list shows the same rows the count is taken from). */
export const countLink = (h: HandlerOverview, status: 'failed' | 'dead' | 'running', n: number) =>
  n > 0 ? html`<a href="/admin/events?handler=${encodeURIComponent(h.name)}&status=${status}">${n}</a>` : String(n);

/**
 * The handlers: flow options, running, waiting by reason (and the keys with
 * most waiting), failed, parked and dead (each linked to those events), with Pause / Resume. Names
 * and flow summaries come from the project's files, so every value goes
 * through `html` (escaped). A live region: it updates as events arrive.
 */
export function handlersTable(handlers: HandlerOverview[], csrf: string): SafeHtml {
  if (handlers.length === 0) return html`<p id="handlers-region" data-live-region>No handlers.</p>`;
  return html`<div class="scroll" id="handlers-region" data-live-region><table id="handlers"><thead><tr><th>handler</th><th class="wide">flow</th><th>state</th><th class="wide">running</th><th>waiting</th><th>failed</th><th class="wide">parked</th><th>dead</th><th></th></tr></thead><tbody>
${handlers.map(
  (
    h,
  ) => html`<tr data-handler="${h.name}"><td class="nowrap"><a href="/admin/handlers/${encodeURIComponent(h.name)}">${h.name}</a>${h.registered ? '' : html` <small>(not loaded)</small>`}</td><td class="wide">${h.flow ?? NO_FLOW}</td>
<td class="state">${handlerState(h)}</td><td class="num wide">${countLink(h, 'running', h.running)}</td>
<td>${waitingSummary(h.waiting)}${h.topWaitingKeys.length > 0 ? html`<br><small>most waiting: ${h.topWaitingKeys.map((k) => `${k.key} (${k.waiting})`).join(', ')}</small>` : ''}</td>
<td class="num" data-count="failed">${countLink(h, 'failed', h.failed)}</td><td class="num wide">${parkedLink(h)}</td><td class="num" data-count="dead">${countLink(h, 'dead', h.dead)}</td>
<td>${handlerButton(h, csrf, 'list')}</td></tr>`,
)}
</tbody></table></div>`;
}

const HANDLER_NOTICES: Record<string, string> = {
  paused: 'is paused on every instance: its deliveries wait until resumed',
  resumed: 'is resumed: its waiting deliveries start within its limits',
};

/** The line shown after a handler button, for a handler the table lists. */
export function handlerNotice(handler: string | undefined, did: string | undefined, handlers: Array<{ name: string }>): Flash | undefined {
  if (!handler || !did || !Object.hasOwn(HANDLER_NOTICES, did) || !handlers.some((h) => h.name === handler)) return undefined;
  return { text: `${handler} ${HANDLER_NOTICES[did]}.`, tone: 'success' };
}
