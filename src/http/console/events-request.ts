import { CHANGE_SOURCE } from '../../db/change-writer.js';
import type { EventRequest } from '../../db/event-requests.js';
import type { EventDetail } from '../../db/events.js';
import { html, type SafeHtml } from '../html.js';

/** Why an event has no request kept: it did not come over HTTP, or came before requests were kept. */
function noRequestReason(event: EventDetail): string {
  if (event.source === CHANGE_SOURCE)
    return 'No request: a captured database change (read from the write-ahead log) does not come in an HTTP request. A Supabase Database Webhook delivery stored before hookrun kept requests has none either.';
  return 'No request is kept for this event: it did not come in over HTTP (pulled by a reconcile or a replay from another hookrun, or captured from a database), or it was stored before hookrun kept requests.';
}

/** The "Request" section: the headers (secrets masked when kept), the raw body, and what verified it. */
export function requestSection(event: EventDetail, request: EventRequest | null): SafeHtml {
  if (!request) return html`<h2 id="request">Request</h2><p id="no-request">${noRequestReason(event)}</p>`;
  const names = Object.keys(request.headers).sort();
  return html`<h2 id="request">Request</h2><p id="verification"><b>Verified:</b> ${request.verification}</p>
<details id="request-headers-box"><summary><b>Headers</b> (${names.length}; credentials and signatures masked)</summary>
<table id="request-headers"><thead><tr><th>name</th><th>value</th></tr></thead><tbody>
${names.map((name) => html`<tr><td><code>${name}</code></td><td class="value">${request.headers[name] ?? ''}</td></tr>`)}
</tbody></table></details>
<details id="request-body-box"><summary><b>Body</b> as received (${Buffer.byteLength(request.body)} bytes)</summary><pre id="request-body">${request.body}</pre></details>`;
}
