import type { Hono } from 'hono';
import { AppError } from '../../errors.js';
import { acknowledgeIssue, countIssues, getIssue, listIssues, resolveIssue } from '../../issues/issue-store.js';
import { ISSUE_STATUSES, type IssueStatus } from '../../issues/issue-types.js';
import type { AdminApiDeps } from '../admin.js';
import { html } from '../html.js';
import { issueId } from '../issue-routes.js';
import { flash, type Flash } from './flash.js';
import { csrfOf, formField, page } from './http.js';
import { actorOf } from '../audit-trail.js';
import { issueDetail, issueTabs, issuesTable, ISSUES_STYLE } from './issues-view.js';
import { layout, messagePage } from './layout.js';

const NOTICES: Record<string, string> = { acknowledged: 'acknowledged: no more notifications until it is resolved and recurs', resolved: 'resolved' };

/** The line after an issue button: the issue is named, and the outcome is what was asked, so it is a success. */
function issueNotice(id: string | undefined, did: string | undefined): Flash | undefined {
  if (!did || !id || !/^\d{1,15}$/.test(id) || !Object.hasOwn(NOTICES, did)) return undefined;
  return { text: `Issue ${id} ${NOTICES[did]}.`, tone: 'success' };
}

/**
 * `GET /admin/issues` (tabs open / acknowledged / resolved with counts),
 * `GET /admin/issues/{id}`, and `POST /admin/issues/{id}/acknowledge|resolve`
 * (back to the page the button was on, the list or the issue, with a
 * notice). Behind the console's session and CSRF guard.
 */
export function addIssuePages(app: Hono, deps: AdminApiDeps): void {
  const { db, clock } = deps;
  app.get('/issues', async (c) => {
    const asked = c.req.query('status') ?? 'open';
    const tab: IssueStatus = (ISSUE_STATUSES as readonly string[]).includes(asked) ? (asked as IssueStatus) : 'open';
    const [issues, counts] = await Promise.all([listIssues(db, { status: tab, limit: 200 }), countIssues(db)]);
    const notice = issueNotice(c.req.query('issue'), c.req.query('did'));
    const body = html`${ISSUES_STYLE}${flash(notice)}${issueTabs(counts, tab)}
<p>Repeated failures of one kind are one issue, told to the alert channel once each time it opens. An issue resolves by itself 15 minutes after it was last seen.</p>
${issuesTable(issues, csrfOf(c, deps), clock.now())}`;
    return page(c, layout('Issues', body, csrfOf(c, deps), undefined, 'issues'));
  });

  app.get('/issues/:id', async (c) => {
    const id = issueId(c);
    const issue = await getIssue(db, id);
    if (!issue) return page(c, messagePage('Not found', `No issue with id ${id}.`, csrfOf(c, deps)), 404);
    const notice = issueNotice(String(id), c.req.query('did'));
    const body = html`${ISSUES_STYLE}${flash(notice)}<p><a href="/admin/issues?status=${issue.status}">← ${issue.status} issues</a></p><h2>${issue.title}</h2>${issueDetail(issue, csrfOf(c, deps), clock.now())}`;
    return page(c, layout(`Issue ${id}`, body, csrfOf(c, deps), undefined, 'issues'));
  });

  for (const action of ['acknowledge', 'resolve'] as const) {
    app.post(`/issues/:id/${action}`, async (c) => {
      try {
        const id = issueId(c);
        const now = new Date(clock.now());
        const issue = action === 'acknowledge' ? await acknowledgeIssue(db, id, now) : await resolveIssue(db, id, now, actorOf(c));
        deps.log.info({ issue: id, action }, 'issue changed from the dashboard');
        if ((await formField(c, 'back')) === 'detail') return c.redirect(`/admin/issues/${issue.id}?did=${issue.status}`, 303);
        const from = action === 'acknowledge' ? 'open' : c.req.query('from') === 'acknowledged' ? 'acknowledged' : 'open';
        return c.redirect(`/admin/issues?status=${from}&issue=${issue.id}&did=${issue.status}`, 303);
      } catch (error) {
        if (error instanceof AppError) return page(c, messagePage('Not done', error.message, csrfOf(c, deps)), error.status);
        throw error;
      }
    });
  }
}
