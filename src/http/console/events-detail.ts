import type { DeliveryStep, EventDelivery } from '../../db/event-history.js';
import type { EventRequest } from '../../db/event-requests.js';
import type { EventAttempt, EventDetail } from '../../db/events.js';
import { html, type SafeHtml } from '../html.js';
import { flash, type Flash } from './flash.js';
import { layout, status, when } from './layout.js';
import { requestSection } from './events-request.js';
import { nextStep, type HandlerState } from './events-next-step.js';

/** Everything an event's page shows. */
export interface EventView {
  event: EventDetail;
  attempts: EventAttempt[];
  deliveries: EventDelivery[];
  request: EventRequest | null;
  /** The handlers of its deliveries: paused or not, their flow options. */
  handlers: HandlerState[];
  /** MAX_ATTEMPTS, when known. */
  maxAttempts: number | undefined;
  csrf: string;
  now: number;
  notice?: Flash;
}

/** One attempt's row, with its stack folded under its error; a replay's row says who replayed and when. */
function attemptRow(a: EventAttempt, now: number): SafeHtml {
  if (a.outcome === 'replayed')
    return html`<tr class="replay-boundary" data-run="${a.run}"><td colspan="6">replayed by ${a.actor ?? 'someone'} ${when(a.startedAt, now)}: run ${a.run} starts</td></tr>`;
  const stack = a.stack ? html`<details class="stack"><summary>stack</summary><pre>${a.stack}</pre></details>` : '';
  return html`<tr data-run="${a.run}"><td>${a.run === 1 ? 'first' : html`replay ${a.run - 1}`}</td><td class="num">${a.attempt}</td><td>${when(a.startedAt, now)}</td><td class="num">${a.durationMs}</td><td>${status(a.outcome)}</td><td class="wide error-text">${a.error ?? ''}${stack}</td></tr>${a.error ? html`<tr class="narrow-error"><td colspan="6">${a.error}${stack}</td></tr>` : ''}`;
}

/** One durable step's row: id, status, attempts, time, then what it sleeps until or waits for, or its error. */
function stepRow(s: DeliveryStep, now: number): SafeHtml {
  const until = s.until ? html` until ${when(s.until, now)}` : '';
  const note = s.status === 'sleeping' ? html`sleeping${until}` : s.waitingFor ? html`waiting for <code>${s.waitingFor}</code>${until}` : (s.error ?? '');
  return html`<tr><td><code>${s.id}</code></td><td>${status(s.status)}</td><td class="num">${s.attempts}</td><td class="num">${s.durationMs ?? ''}</td><td class="wide">${note}</td></tr>`;
}

/** A delivery's durable steps, in the order they ran; nothing for a handler without steps. */
function stepsTable(d: EventDelivery, now: number): SafeHtml | string {
  if (d.steps.length === 0) return '';
  return html`<table class="steps" data-handler="${d.handler}"><thead><tr><th>step</th><th>status</th><th class="num">attempts</th><th class="num">ms</th><th class="wide">until, waiting for, error</th></tr></thead><tbody>${d.steps.map((s) => stepRow(s, now))}</tbody></table>`;
}

/** One delivery: its state, its steps and its history, run by run (a replay opens a run, saying who). */
function deliverySection(d: EventDelivery, history: EventAttempt[], now: number): SafeHtml {
  const folded = d.debouncedIds.length > 0 ? html` · folded in: ${d.debouncedIds.map((id) => html`<a href="/admin/events/${id}">${id}</a> `)}` : '';
  return html`<h3>${d.handler} <small>${status(d.status)} · attempt ${d.attempts}${d.run > 1 ? ` of run ${d.run}` : ''}${d.flowKey ? html` · key <code>${d.flowKey}</code>` : ''}${folded}</small></h3>
${stepsTable(d, now)}${history.length === 0 ? html`<p>No attempt yet.</p>` : html`<table class="attempts" data-handler="${d.handler}"><thead><tr><th>run</th><th>#</th><th>started (UTC)</th><th class="num">ms</th><th>outcome</th><th class="wide">error</th></tr></thead><tbody>${history.map((a) => attemptRow(a, now))}</tbody></table>`}`;
}

/** The event's deliveries, one section per handler, each with its attempts; an event without any says why. */
function attemptsSection(view: EventView, now: number): SafeHtml {
  const { deliveries, attempts } = view;
  if (deliveries.length === 0)
    return html`<div id="attempts"><p>${view.event.status === 'ignored' ? 'No handler takes this type.' : 'No delivery yet: a worker turns it into its handlers\u2019 deliveries.'}</p></div>`;
  return html`<div id="attempts">${deliveries.map((d) =>
    deliverySection(
      d,
      attempts.filter((a) => a.handler === d.handler),
      now,
    ),
  )}</div>`;
}

/** With several handlers on the event: which to run again (all, or one by name). */
function handlerChoice(deliveries: EventDelivery[]): SafeHtml | string {
  const names = deliveries.map((d) => d.handler).sort();
  if (names.length < 2) return '';
  return html` <select name="handler" aria-label="handler"><option value="">all</option>${names.map((n) => html`<option value="${n}">only ${n}</option>`)}</select>`;
}

const STYLE = html`<style>
#event-page .attempts .narrow-error{display:none}#event-page td.value{overflow-wrap:anywhere;font-family:monospace;font-size:12px}
#event-page .replay-boundary td{background:#eef2ff;font-size:12px;font-weight:600}#event-page h3{font-size:14px;margin:12px 0 4px}
#event-page details.stack pre{font-size:11px;white-space:pre-wrap;overflow-wrap:anywhere;margin:4px 0}
#event-page #next-step{background:#fff;border-left:4px solid #111827;padding:8px 12px}#event-page #next-step form{display:inline}
@media (max-width:640px){#event-page .attempts .narrow-error{display:table-row;color:#991b1b}#event-page .attempts .narrow-error td{overflow-wrap:anywhere}}
</style>`;

/** The time of the next attempt where one will be made; a dead, finished or running event has none. */
const nextAttempt = (event: EventDetail, now: number) => (event.status === 'pending' || event.status === 'failed' ? when(event.nextAttemptAt, now) : '-');

/** A suspected replay's line: stored and handled, but its signed body is an earlier event's, under a new delivery id. */
const sameBody = (event: EventDetail) =>
  event.sameBodyAs === null
    ? ''
    : html`<dt>same body as</dt><dd id="same-body-as"><a href="/admin/events/${event.sameBodyAs}">event #${event.sameBodyAs}</a> (a suspected replay: same signed body, new delivery id)</dd>`;

/** One event: its fields, what to do next, the request it came in, its deliveries with their attempts by run, replay, the payload. */
export function eventDetailPage(view: EventView): string {
  const { event, now, csrf, notice } = view;
  const payload = JSON.stringify(event.payload, null, 2);
  const body = html`<div id="event-page">${STYLE}${flash(notice)}
<p><a href="/admin/events">← Events</a></p>
${nextStep(view)}<dl>
<dt>source</dt><dd>${event.source}</dd><dt>type</dt><dd>${event.type}</dd><dt>key</dt><dd><code>${event.key}</code></dd>
<dt>status</dt><dd id="event-status">${status(event.status)}</dd><dt>attempts</dt><dd>${event.attempts}${view.maxAttempts ? ` of ${view.maxAttempts}` : ''}</dd>
<dt>received</dt><dd>${when(event.receivedAt, now)}</dd><dt>next attempt</dt><dd id="next-attempt">${nextAttempt(event, now)}</dd><dt>processed</dt><dd>${when(event.processedAt, now)}</dd>
<dt>last error</dt><dd>${event.lastError ?? '-'}</dd>${sameBody(event)}</dl>
<h2>Deliveries</h2>${attemptsSection(view, now)}
<form method="post" action="/admin/events/${event.id}/replay"><input type="hidden" name="csrf" value="${csrf}"><p><button type="submit">Replay</button>${handlerChoice(view.deliveries)} puts it back in the queue (handlers are idempotent).</p></form>
${requestSection(event, view.request)}
<details open id="payload-box"><summary><b>Payload</b> (${Buffer.byteLength(payload)} bytes as shown) · <a href="/admin/events/${event.id}/payload.json">raw JSON</a> (to copy or save)</summary><pre id="payload">${payload}</pre></details></div>`;
  return layout(`Event ${event.id}`, body, csrf, undefined, 'events');
}
