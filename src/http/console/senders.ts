import type { Hono } from 'hono';
import { listSenderActivity } from '../../issues/sender-activity.js';
import type { AdminApiDeps } from '../admin.js';
import { html } from '../html.js';
import { senderConfigOf } from '../issue-routes.js';
import { csrfOf, page } from './http.js';
import { layout, when } from './layout.js';

const STYLE = html`<style>
#senders td.rej{overflow-wrap:anywhere}.secret-yes{color:#065f46}.secret-no{color:#991b1b;font-weight:600}
@media (max-width:640px){#senders .opt,#senders td.last time{display:none}#senders td.last .ago{font-size:inherit}}
</style>`;

/**
 * `GET /admin/senders`: a row per sender route with its signing secret set
 * or not (never any part of it), its last delivery, events accepted and
 * requests refused by reason in the last 24 h. Behind the console's session guard.
 */
export function addSenderPages(app: Hono, deps: AdminApiDeps): void {
  app.get('/senders', async (c) => {
    const config = senderConfigOf(deps.config);
    const now = deps.clock.now();
    const senders = config ? await listSenderActivity(deps.db, config, now) : [];
    const rows = senders.map((s) => {
      const refused = Object.entries(s.rejections24h).sort(([, a], [, b]) => b - a);
      return html`<tr data-route="${s.route}"><td><code><span class="opt">/webhooks/</span>${s.route}</code></td><td class="opt">${s.sender}</td>
<td data-secret="${s.secretConfigured ? 'configured' : 'missing'}">${s.secretConfigured ? html`<span class="secret-yes">configured</span>` : html`<span class="secret-no">not set</span>`}</td>
<td class="last">${when(s.lastDeliveryAt, now)}</td><td class="num">${s.accepted24h}</td>
<td class="rej">${refused.length === 0 ? '0' : refused.map(([reason, n]) => html`<span data-reason="${reason}">${reason}: ${n}</span><br>`)}</td></tr>`;
    });
    const body = html`${STYLE}<p>Each route a sender posts to. Without its secret a route answers 503; refusals (bad signatures, old timestamps) are counted per minute.</p>
<table id="senders"><thead><tr><th>route</th><th class="opt">sender</th><th>secret</th><th>last delivery</th><th>events<span class="opt"> 24 h</span></th><th>refused<span class="opt"> 24 h</span></th></tr></thead><tbody>
${rows}
</tbody></table>`;
    return page(c, layout('Senders', body, csrfOf(c, deps), undefined, 'senders'));
  });
}
