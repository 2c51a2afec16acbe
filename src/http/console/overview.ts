import type { Context, Hono } from 'hono';
import { SOURCES } from '../../webhooks/providers/index.js';
import type { JobStatus } from '../../cron/cron-service.js';
import type { CronRunRow } from '../../db/cron-runs.js';
import { EVENT_STATUSES, countEventsByStatus, countsPerMinute, listEvents, type EventSummary, type MinuteCounts } from '../../db/events.js';
import { MIRROR_TABLES } from '../../db/mirror-read.js';
import { listHandlerOverviews, type HandlerOverview } from '../../inbox/handler-overview.js';
import type { AdminApiDeps } from '../admin.js';
import { catalogOf } from '../handler-routes.js';
import { minuteChart } from './chart.js';
import { handlerNotice, handlersTable } from './handlers.js';
import { csrfOf, page } from './http.js';
import { cronNotice, jobsTable, runsTable } from './jobs.js';
import { eventsTable, searchForm, filterLink, type ListFilter } from './events.js';
import { html } from '../html.js';
import { layout } from './layout.js';

/** What the overview shows. */
export interface OverviewData {
  counts: Record<string, number>;
  events: EventSummary[];
  nextCursor: number | undefined;
  filter: ListFilter;
  jobs: JobStatus[];
  /** The server clock, for relative times. */
  now: number;
  /** Events per minute over the last hour, for the chart. */
  perMinute: MinuteCounts;
  runs: CronRunRow[];
  /** Each handler: flow options, what its deliveries wait for, paused or not. */
  handlers: HandlerOverview[];
  notice?: string;
  csrf: string;
}

/** Counts by status, the events table with filters and paging, handlers, cron jobs and recent runs. */
export function overviewPage(data: OverviewData): string {
  const { filter } = data;
  const dead = data.counts.dead ?? 0;
  const replayDead =
    dead > 0
      ? html`<form method="post" action="/admin/events/replay" class="inline"><input type="hidden" name="csrf" value="${data.csrf}"><input type="hidden" name="status" value="dead"><button>Replay all ${dead} dead</button></form>`
      : '';
  const body = html`${data.notice ? html`<p class="notice" role="status">${data.notice}</p>` : ''}
<h2>Last hour</h2>${minuteChart(data.perMinute)}
<h2>Events by status</h2><div class="counts"><a href="${filterLink(filter, { status: undefined })}" class="${filter.status ? '' : 'on'}">all</a>
${EVENT_STATUSES.map((s) => html`<a href="${filterLink(filter, { status: s })}" class="${filter.status === s ? 'on' : ''}" data-status="${s}">${s}: <b>${data.counts[s] ?? 0}</b></a>`)} ${replayDead}</div>
<h2>Events${filter.live ? html`<a class="live" href="${filterLink(filter, { live: undefined })}">⏸ pause auto-refresh</a>` : html`<a class="live" href="${filterLink(filter, { live: '1' })}">▶ auto-refresh every 5 s</a>`}</h2>
${filter.parked ? html`<p>Only events with a parked delivery · <a href="${filterLink(filter, { parked: undefined })}">show all</a></p>` : ''}
<p>Source: <a href="${filterLink(filter, { source: undefined })}">all</a> ${SOURCES.map((s) => html`· <a href="${filterLink(filter, { source: s })}">${filter.source === s ? html`<b>${s}</b>` : s}</a> `)}</p>
${searchForm(filter)}
${eventsTable(data.events, Boolean(filter.status || filter.source || filter.type || filter.q), data.now)}
${data.nextCursor !== undefined ? html`<p><a href="${filterLink(filter, { cursor: data.nextCursor })}">Older events →</a></p>` : ''}
<h2>What the handlers wrote</h2><p id="mirrors">${Object.keys(MIRROR_TABLES).map((t, i) => html`${i ? ' · ' : ''}<a href="/admin/mirror/${t}">${t}</a>`)}</p>
<h2>Handlers</h2>${handlersTable(data.handlers, data.csrf)}
<h2>Cron jobs</h2>${jobsTable(data.jobs, data.csrf)}
<h2>Recent cron runs</h2>${runsTable(data.runs)}`;
  return layout('Dashboard', body, data.csrf, filter.live ? LIVE_REFRESH_SECONDS : undefined);
}

/** How often the overview reloads while auto-refresh is on. */
const LIVE_REFRESH_SECONDS = 5;

/** GET /admin: the overview. */
export function addOverviewRoute(app: Hono, deps: AdminApiDeps): void {
  app.get('/', (c) => overview(c, deps));
}

/** GET /admin: counts, the filtered event list, handlers, jobs and runs. */
async function overview(c: Context, deps: AdminApiDeps): Promise<Response> {
  const { db, clock } = deps;
  const text = (name: string, max: number) => {
    const value = c.req.query(name)?.trim();
    return value ? value.slice(0, max) : undefined;
  };
  const filter = {
    status: (EVENT_STATUSES as readonly string[]).includes(c.req.query('status') ?? '') ? c.req.query('status') : undefined,
    source: (SOURCES as readonly string[]).includes(c.req.query('source') ?? '') ? c.req.query('source') : undefined,
    type: text('type', 255),
    q: text('q', 255),
    live: c.req.query('live') === '1' ? '1' : undefined,
    parked: c.req.query('parked') === '1' ? '1' : undefined,
  };
  const cursor = /^\d{1,15}$/.test(c.req.query('cursor') ?? '') ? Number(c.req.query('cursor')) : undefined;
  const [counts, page_, jobs, runs, perMinute, handlers] = await Promise.all([
    countEventsByStatus(db),
    listEvents(db, {
      status: filter.status,
      source: filter.source,
      type: filter.type,
      search: filter.q,
      parked: filter.parked === '1',
      before: cursor,
      limit: 50,
    }),
    deps.cron.listJobs(3),
    deps.cron.listRuns({ limit: 10 }),
    countsPerMinute(db, clock.now()),
    catalogOf(deps.handlers).then((catalog) => listHandlerOverviews(db, catalog, clock.now(), { topKeys: 3 })),
  ]);
  const replayed = c.req.query('replayed');
  const notice =
    replayed !== undefined && /^\d+$/.test(replayed)
      ? `Replayed ${replayed} event(s).`
      : (cronNotice(c.req.query('job'), c.req.query('did'), jobs) ?? handlerNotice(c.req.query('handler'), c.req.query('did'), handlers));
  return page(
    c,
    overviewPage({
      counts,
      events: page_.events,
      nextCursor: page_.nextCursor,
      filter,
      jobs,
      runs,
      handlers,
      notice,
      csrf: csrfOf(c, deps),
      now: clock.now(),
      perMinute,
    }),
  );
}
