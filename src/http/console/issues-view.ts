import type { Issue, IssueStatus } from '../../issues/issue-types.js';
import { ISSUE_STATUSES } from '../../issues/issue-types.js';
import { html, type SafeHtml } from '../html.js';
import { status, when } from './layout.js';

/** The page's own style: on a phone the secondary columns go, id, title, status, last seen and the buttons stay. */
export const ISSUES_STYLE = html`<style>
#issues td.title{overflow-wrap:anywhere;min-width:0}#issues form{display:inline}#issues td.act{white-space:nowrap}
@media (max-width:640px){#issues .opt{display:none}#issues td.act button{display:block;margin:2px 0}}
</style>`;

/** Where an issue's subject is looked at: its handler (and its dead events), its job, the senders page, the events list. */
export function subjectLinks(issue: Issue): SafeHtml {
  const s = encodeURIComponent(issue.subject);
  switch (issue.kind) {
    case 'handler_failing':
      return html`<a href="/admin/handlers/${s}">${issue.subject}</a> · <a href="/admin/events?handler=${s}&amp;status=dead">dead events</a>`;
    case 'job_failing':
    case 'job_silent':
      return html`<a href="/admin/jobs/${s}">${issue.subject}</a>`;
    case 'sender_rejecting':
      return html`<a href="/admin/senders">${issue.subject}</a>`;
    default:
      return html`<a href="/admin/events?status=pending">${issue.subject}</a>`;
  }
}

/** Where an issue button sends the browser back to: the list it was pressed in, or the issue's own page. */
export type IssueBack = 'list' | 'detail';

/** The Acknowledge and Resolve buttons an issue in this status offers (POST with the session's CSRF token and the page to come back to). */
export function issueButtons(issue: Issue, csrf: string, back: IssueBack): SafeHtml {
  const button = (action: 'acknowledge' | 'resolve', label: string) =>
    html`<form method="post" action="/admin/issues/${issue.id}/${action}?from=${issue.status}"><input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="back" value="${back}"><button data-action="${action}">${label}</button></form>`;
  if (issue.status === 'resolved') return html``;
  return html`${issue.status === 'open' ? button('acknowledge', 'Acknowledge') : ''} ${button('resolve', 'Resolve')}`;
}

/** The tabs open / acknowledged / resolved with their counts. */
export function issueTabs(counts: Record<IssueStatus, number>, active: IssueStatus): SafeHtml {
  return html`<nav class="counts" aria-label="issue status">${ISSUE_STATUSES.map(
    (s) => html`<a href="/admin/issues?status=${s}" data-status="${s}"${s === active ? html` class="on" aria-current="page"` : ''}>${s} (${counts[s]})</a>`,
  )}</nav>`;
}

/** The issues of one tab: title, kind, subject (linked), occurrences, first and last seen, buttons. */
export function issuesTable(issues: Issue[], csrf: string, now: number): SafeHtml {
  if (issues.length === 0) return html`<p id="no-issues">No issues here.</p>`;
  return html`<table id="issues"><thead><tr><th>id</th><th>issue</th><th class="opt">kind</th><th class="opt">subject</th><th class="opt">count</th><th class="opt">first seen</th><th>last seen</th><th></th></tr></thead><tbody>
${issues.map(
  (i) => html`<tr data-issue="${i.id}" data-status="${i.status}"><td class="id"><a href="/admin/issues/${i.id}">${i.id}</a></td>
<td class="title"><a href="/admin/issues/${i.id}">${i.title}</a> ${status(i.status)}</td><td class="opt">${i.kind}</td><td class="opt">${subjectLinks(i)}</td>
<td class="num opt">${i.occurrences}</td><td class="opt">${when(i.firstSeenAt, now)}</td><td>${when(i.lastSeenAt, now)}</td><td class="act">${issueButtons(i, csrf, 'list')}</td></tr>`,
)}
</tbody></table>`;
}

/** One issue: everything the row has, the latest detail in full (escaped), and its buttons. */
export function issueDetail(i: Issue, csrf: string, now: number): SafeHtml {
  return html`<div id="issue" data-status="${i.status}"><p>${status(i.status)} ${issueButtons(i, csrf, 'detail')}</p><dl>
<dt>kind</dt><dd>${i.kind}</dd><dt>subject</dt><dd>${subjectLinks(i)}</dd><dt>occurrences</dt><dd>${i.occurrences}</dd>
<dt>first seen</dt><dd>${when(i.firstSeenAt, now)}</dd><dt>last seen</dt><dd>${when(i.lastSeenAt, now)}</dd>
<dt>acknowledged</dt><dd>${when(i.acknowledgedAt, now)}</dd><dt>resolved</dt><dd>${i.resolvedAt ? html`${when(i.resolvedAt, now)} by ${i.resolvedBy}` : '-'}</dd>
<dt>notified</dt><dd>${when(i.notifiedAt, now)}</dd></dl>
<h2>Latest occurrence</h2><pre id="detail">${i.detail ?? ''}</pre></div>`;
}
