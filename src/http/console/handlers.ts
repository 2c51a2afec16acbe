import { NO_FLOW } from '../../flow/describe.js';
import { waitingSummary, type HandlerOverview } from '../../inbox/handler-overview.js';
import { html, type SafeHtml } from '../html.js';

const utc = (value: Date) =>
  value
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d{3}Z$/, 'Z');

/** A Pause or Resume button: a form with the session's CSRF token, as the cron buttons post theirs. */
function handlerAction(name: string, action: 'pause' | 'resume', label: string, csrf: string): SafeHtml {
  return html`<form method="post" action="/admin/handlers/${encodeURIComponent(name)}/${action}" class="inline"><input type="hidden" name="csrf" value="${csrf}"><button data-action="${action}">${label}</button></form>`;
}

/**
 * The dashboard's handlers: flow options, running, waiting by reason (and the
 * keys with most waiting), parked (linked to those events),
 * with Pause / Resume. Names and flow summaries come from the project's
 * files, so every value goes through `html` (escaped).
 */
export function handlersTable(handlers: HandlerOverview[], csrf: string): SafeHtml {
  if (handlers.length === 0) return html`<p>No handlers.</p>`;
  return html`<div class="scroll"><table id="handlers"><thead><tr><th>handler</th><th>flow</th><th>state</th><th>running</th><th>waiting</th><th>parked</th><th class="wide">dead</th><th></th></tr></thead><tbody>
${handlers.map(
  (h) => html`<tr data-handler="${h.name}"><td>${h.name}${h.registered ? '' : html` <small>(not loaded)</small>`}</td><td>${h.flow ?? NO_FLOW}</td>
<td>${h.paused ? html`<b>paused</b>${h.pausedAt ? html` since ${utc(new Date(h.pausedAt))}` : ''}` : 'active'}</td><td class="num">${h.running}</td>
<td>${waitingSummary(h.waiting)}${h.topWaitingKeys.length > 0 ? html`<br><small>most waiting: ${h.topWaitingKeys.map((k) => `${k.key} (${k.waiting})`).join(', ')}</small>` : ''}</td>
<td class="num">${h.parked > 0 ? html`<a href="/admin?parked=1">${h.parked}</a>` : h.parked}</td><td class="num wide">${h.dead}</td>
<td>${h.paused ? handlerAction(h.name, 'resume', 'Resume', csrf) : h.registered ? handlerAction(h.name, 'pause', 'Pause', csrf) : ''}</td></tr>`,
)}
</tbody></table></div>`;
}

const HANDLER_NOTICES: Record<string, string> = {
  paused: 'is paused on every instance: its deliveries wait until resumed',
  resumed: 'is resumed: its waiting deliveries start within its limits',
};

/** The line shown after a handler button, for a handler the table lists. */
export function handlerNotice(handler: string | undefined, did: string | undefined, handlers: Array<{ name: string }>): string | undefined {
  if (!handler || !did || !Object.hasOwn(HANDLER_NOTICES, did) || !handlers.some((h) => h.name === handler)) return undefined;
  return `${handler} ${HANDLER_NOTICES[did]}.`;
}
