import type { Context, Hono } from 'hono';
import type { JobStatus } from '../../cron/cron-service.js';
import { CHART_RANGES, eventHistogram, type ChartRange, type EventHistogram } from '../../db/event-histogram.js';
import { countEventsByStatus } from '../../db/event-counts.js';
import { EVENT_STATUSES } from '../../db/events.js';
import { countIssuesByStatus } from '../../db/issue-counts.js';
import { listHandlerOverviews, waitingTotal, type HandlerOverview } from '../../inbox/handler-overview.js';
import type { AdminApiDeps } from '../admin.js';
import { catalogOf } from '../handler-routes.js';
import { html, type SafeHtml } from '../html.js';
import { CHART_STYLE, eventChart } from './chart.js';
import { flash, toneOfStatus, type Flash } from './flash.js';
import { csrfOf, page } from './http.js';
import { overviewVerdict, verdictBox } from './overview-verdict.js';
import { layout, status } from './layout.js';

/** What the overview shows. */
export interface OverviewData {
  counts: Record<string, number>;
  histogram: EventHistogram;
  jobs: JobStatus[];
  handlers: HandlerOverview[];
  issues: Record<string, number>;
  notice?: Flash;
  csrf: string;
}

/** The query parameters of the old one-page dashboard's event list: such a URL is a bookmark of the list, now at /admin/events. */
const OLD_LIST_PARAMS = ['status', 'source', 'type', 'q', 'parked', 'cursor'];

/** Counts by status (each a link to those events), each linked to its list. */
function statusCounts(counts: Record<string, number>): SafeHtml {
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  return html`<div class="counts" id="counts" data-live-region><a href="/admin/events" data-status="all">all: <b>${total}</b></a>
${EVENT_STATUSES.map((s) => html`<a href="/admin/events?status=${s}" data-status="${s}"${(counts[s] ?? 0) > 0 ? html` data-tone="${toneOfStatus(s)}"` : ''}>${s}: <b>${counts[s] ?? 0}</b></a>`)}</div>`;
}

/** One line per handler that needs a look (paused, dead, parked, waiting), and how many there are. */
function handlerSummary(handlers: HandlerOverview[]): SafeHtml {
  const paused = handlers.filter((h) => h.paused).length;
  const dead = handlers.reduce((n, h) => n + h.dead, 0);
  const parked = handlers.reduce((n, h) => n + h.parked, 0);
  const waiting = handlers.reduce((n, h) => n + waitingTotal(h.waiting), 0);
  const running = handlers.reduce((n, h) => n + h.running, 0);
  return html`<section id="handlers-summary" data-live-region><h2><a href="/admin/handlers">Handlers</a></h2>
<p>${handlers.length} handler(s) · ${running} running · ${waiting} waiting · ${parked} parked · ${dead} dead${paused ? html` · <b>${paused} paused</b>` : ''}</p>
${handlers
  .filter((h) => h.paused || h.dead > 0 || h.parked > 0)
  .map(
    (h) =>
      html`<p><a href="/admin/handlers/${encodeURIComponent(h.name)}">${h.name}</a>: ${h.paused ? 'paused' : 'active'}, ${h.parked} parked, ${h.dead} dead</p>`,
  )}</section>`;
}

/** Each job's last outcome, the paused ones, and a link to the jobs page. */
function jobSummary(jobs: JobStatus[]): SafeHtml {
  const failing = jobs.filter((j) => j.lastRun?.status === 'failed');
  const paused = jobs.filter((j) => j.pausedAt).length;
  return html`<section id="jobs-summary" data-live-region><h2><a href="/admin/jobs">Jobs</a></h2>
<p>${jobs.length} job(s) · ${paused} paused · ${failing.length} whose last run failed</p>
${failing.map((j) => html`<p><a href="/admin/jobs/${encodeURIComponent(j.name)}">${j.name}</a>: ${status('failed')} ${j.lastRun?.error?.slice(0, 120) ?? ''}</p>`)}</section>`;
}

/** Open and acknowledged issues, linked to the issues page. */
function issueSummary(issues: Record<string, number>): SafeHtml {
  return html`<section id="issues-summary" data-live-region><h2><a href="/admin/issues">Issues</a></h2>
<p><a href="/admin/issues?status=open">${issues.open ?? 0} open</a> · <a href="/admin/issues?status=acknowledged">${issues.acknowledged ?? 0} acknowledged</a> · ${issues.resolved ?? 0} resolved</p></section>`;
}

/** The overview: counts by status, the chart, and what handlers, jobs and issues need; the events themselves are on /admin/events. */
export function overviewPage(data: OverviewData): string {
  const body = html`${flash(data.notice)}${verdictBox(overviewVerdict(data))}${CHART_STYLE}
<h2>Events by status</h2>${statusCounts(data.counts)}<p><a href="/admin/events">All events →</a></p>
<h2>Received</h2><div id="chart-region" data-live-region>${eventChart(data.histogram)}</div>
${handlerSummary(data.handlers)}${jobSummary(data.jobs)}${issueSummary(data.issues)}`;
  return layout('Overview', body, data.csrf, undefined, 'overview');
}

/** GET /admin: the overview; an old event-list URL (`/admin?status=dead`) goes on to /admin/events with its query. */
export function addOverviewRoute(app: Hono, deps: AdminApiDeps): void {
  app.get('/', (c) => {
    const query = new URL(c.req.url).search;
    if (OLD_LIST_PARAMS.some((name) => c.req.query(name) !== undefined)) return c.redirect(`/admin/events${query}`, 303);
    return overview(c, deps);
  });
}

async function overview(c: Context, deps: AdminApiDeps): Promise<Response> {
  const { db, clock } = deps;
  const asked = c.req.query('range') ?? '';
  const range: ChartRange = Object.hasOwn(CHART_RANGES, asked) ? (asked as ChartRange) : '1h';
  const [counts, histogram, jobs, handlers, issues] = await Promise.all([
    countEventsByStatus(db),
    eventHistogram(db, clock.now(), range),
    deps.cron.listJobs(1),
    catalogOf(deps.handlers).then((catalog) => listHandlerOverviews(db, catalog, clock.now(), { topKeys: 0 })),
    countIssuesByStatus(db),
  ]);
  const replayed = c.req.query('replayed');
  const notice =
    replayed !== undefined && /^\d+$/.test(replayed)
      ? { text: `Replayed ${replayed} event(s): they are back in the queue.`, tone: 'info' as const }
      : undefined;
  return page(c, overviewPage({ counts, histogram, jobs, handlers, issues, notice, csrf: csrfOf(c, deps) }));
}
