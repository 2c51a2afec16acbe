import type { Hono } from 'hono';
import { listAudit, type AuditEntry, type AuditOutcome } from '../../db/audit.js';
import type { AdminApiDeps } from '../admin.js';
import { html, type SafeHtml } from '../html.js';
import { csrfOf, page } from './http.js';
import { layout, when } from './layout.js';

/** Entries per page. */
const PAGE_SIZE = 100;
const OUTCOMES: readonly AuditOutcome[] = ['ok', 'refused', 'failed'];

const outcomeChip = (outcome: string) =>
  html`<span class="status s-${outcome === 'ok' ? 'succeeded' : outcome === 'failed' ? 'failed' : 'skipped'}">${outcome}</span>`;

/** The audit's rows: when, who (and how), what, on what, how it ended and why. */
function auditTable(entries: AuditEntry[], nowMs: number): SafeHtml {
  if (entries.length === 0) return html`<p>No actions recorded.</p>`;
  return html`<div class="scroll"><table id="audit"><thead><tr><th>when</th><th>who</th><th>action</th><th>target</th><th>outcome</th><th class="wide">detail</th></tr></thead><tbody>
${entries.map(
  (e) =>
    html`<tr data-audit-id="${e.id}" data-operator="${e.operator}" data-action="${e.action}" data-outcome="${e.outcome}"><td>${when(e.at, nowMs)}</td><td>${e.operator} <small class="wide">${e.role}, via ${e.via}</small></td><td><code>${e.action}</code></td><td>${e.target ?? '-'}</td><td>${outcomeChip(e.outcome)}</td><td class="wide">${e.detail ?? ''}</td></tr>`,
)}
</tbody></table></div>`;
}

/** The filter: one operator's actions, one outcome's. */
function auditFilter(operator: string | undefined, outcome: string | undefined): SafeHtml {
  return html`<form method="get" action="/admin/audit" class="search"><label>operator <input name="operator" value="${operator ?? ''}" size="16" pattern="[A-Za-z0-9_\\-]{1,32}"></label>
<label>outcome <select name="outcome"><option value="">any</option>${OUTCOMES.map((o) => html`<option${o === outcome ? html` selected` : ''}>${o}</option>`)}</select></label><button>Filter</button></form>`;
}

/**
 * `GET /admin/audit`: every action taken or tried from the console, the
 * admin API and the CLI, newest first (who, how, when, what, on what, how it
 * ended), filtered by operator or outcome, a page at a time. A read: a viewer sees it too.
 */
export function addAuditPage(app: Hono, deps: AdminApiDeps): void {
  app.get('/audit', async (c) => {
    const asked = c.req.query('operator');
    const operator = asked && /^[A-Za-z0-9_-]{1,32}$/.test(asked) ? asked : undefined;
    const outcome = OUTCOMES.find((o) => o === c.req.query('outcome'));
    const before = /^\d{1,15}$/.test(c.req.query('before') ?? '') ? Number(c.req.query('before')) : undefined;
    const entries = await listAudit(deps.db, { limit: PAGE_SIZE + 1, before, operator, outcome });
    const shown = entries.slice(0, PAGE_SIZE);
    const query = new URLSearchParams({ ...(operator ? { operator } : {}), ...(outcome ? { outcome } : {}) });
    if (entries.length > PAGE_SIZE) query.set('before', String(shown[shown.length - 1]!.id));
    const older = entries.length > PAGE_SIZE ? html`<p><a href="/admin/audit?${query.toString()}" id="older">Older actions →</a></p>` : '';
    const body = html`<p>Every action taken or tried from the console, the admin API and the CLI: who, how, when, on what, and how it ended. Kept AUDIT_RETENTION_DAYS.</p>
${auditFilter(operator, outcome)}${auditTable(shown, deps.clock.now())}${older}`;
    return page(c, layout('Audit', body, csrfOf(c, deps), undefined, 'audit'));
  });
}
