import { SOURCES } from '../webhooks/providers/index.js';
import type { JobStatus } from '../cron/cron-service.js';
import type { CronRunRow } from '../db/cron-runs.js';
import { EVENT_STATUSES, type EventAttempt, type EventDetail, type EventSummary, type MinuteCounts } from '../db/events.js';
import { MIRROR_TABLES } from '../db/mirror-read.js';
import type { HandlerOverview } from '../inbox/handler-overview.js';
import { minuteChart } from './dashboard-chart.js';
import { handlersTable } from './dashboard-handlers.js';
import { html, trusted, type SafeHtml } from './html.js';

const STYLE = `
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d1d1f;background:#f6f7f9}
header{background:#111827;color:#fff;padding:10px 24px;display:flex;gap:16px;align-items:center}
header a{color:#fff;text-decoration:none;font-weight:600}header form{margin-left:auto}
main{padding:16px 24px;max-width:1200px}h2{margin:24px 0 8px;font-size:16px}
table{border-collapse:collapse;width:100%;background:#fff}th,td{text-align:left;padding:6px 8px;border-bottom:1px solid #e5e7eb;vertical-align:top}
th{background:#f3f4f6;font-weight:600}td.num{text-align:right}pre{background:#fff;border:1px solid #e5e7eb;padding:12px;overflow:auto;max-height:70vh}
.status{display:inline-block;padding:1px 8px;border-radius:10px;background:#e5e7eb}.s-processed,.s-succeeded{background:#d1fae5}.s-dead,.s-failed{background:#fee2e2}.s-pending,.s-running{background:#fef3c7}.s-ignored,.s-skipped{background:#e0e7ff}
.counts{display:flex;gap:8px;flex-wrap:wrap}.counts a{background:#fff;border:1px solid #e5e7eb;padding:6px 12px;border-radius:6px;text-decoration:none;color:inherit}
.counts a.on{border-color:#111827}.notice{background:#ecfdf5;border:1px solid #a7f3d0;padding:8px 12px}.error{background:#fef2f2;border:1px solid #fecaca;padding:8px 12px}
form.inline{display:inline}button{cursor:pointer}dl{display:grid;grid-template-columns:max-content 1fr;gap:4px 16px;background:#fff;padding:12px}dt{font-weight:600}
dd{margin:0;overflow-wrap:anywhere}.scroll{overflow-x:auto;max-width:100%}.ago{color:#6b7280;font-size:12px}form.search{display:flex;gap:8px;flex-wrap:wrap;margin:8px 0}
form.search input{padding:4px 8px}.live{margin-left:8px;font-size:13px}
figure.chart{margin:0;background:#fff;border:1px solid #e5e7eb;padding:8px}figcaption{font-size:13px;color:#374151}
@media (max-width:640px){header,main{padding-left:10px;padding-right:10px}.wide{display:none}td,th{padding:4px 5px}pre{max-height:50vh}}`;

/** The page frame; `csrf` present means a logged-in page (shows the logout button); `refreshSeconds` reloads it (no script: a meta refresh). */
export function layout(title: string, body: SafeHtml, csrf?: string, refreshSeconds?: number): string {
  const logout = csrf ? html`<form method="post" action="/admin/logout"><input type="hidden" name="csrf" value="${csrf}"><button>Log out</button></form>` : '';
  const refresh = refreshSeconds ? html`<meta http-equiv="refresh" content="${refreshSeconds}">` : '';
  return html`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">${refresh}
<title>${title} · hookrun</title><style>${trusted(STYLE)}</style></head>
<body><header><a href="/admin">hookrun</a><span>${title}</span>${logout}</header><main>${body}</main></body></html>`.toString();
}

const status = (value: string) => html`<span class="status s-${value}">${value}</span>`;
const time = (value: Date | string | null | undefined) =>
  value
    ? new Date(value)
        .toISOString()
        .replace('T', ' ')
        .replace(/\.\d{3}Z$/, 'Z')
    : '-';

/** "3 min ago" / "in 2 h", from the server's clock, so a reader need not do UTC arithmetic. */
export function relativeTime(value: Date | string, nowMs: number): string {
  const seconds = Math.round((new Date(value).getTime() - nowMs) / 1000);
  const abs = Math.abs(seconds);
  const [n, unit] =
    abs < 60 ? [abs, 's'] : abs < 3600 ? [Math.round(abs / 60), 'min'] : abs < 172_800 ? [Math.round(abs / 3600), 'h'] : [Math.round(abs / 86_400), 'd'];
  if (abs < 5) return 'just now';
  return seconds < 0 ? `${n} ${unit} ago` : `in ${n} ${unit}`;
}

/** An absolute UTC time with its relative form beside it. */
const when = (value: Date | string | null | undefined, nowMs: number) =>
  value ? html`<time datetime="${new Date(value).toISOString()}">${time(value)}</time> <span class="ago">${relativeTime(value, nowMs)}</span>` : '-';

/** The login form; `error` is shown above it after a wrong token. */
export function loginPage(error?: string): string {
  return layout(
    'Log in',
    html`${error ? html`<p class="error">${error}</p>` : ''}
<form method="post" action="/admin/login"><p><label>Admin token (ADMIN_TOKEN)<br><input type="password" name="token" autocomplete="current-password" required size="50" autofocus></label></p>
<p><button type="submit">Log in</button></p></form>`,
  );
}

/** A page that only says something (not configured, not found, conflict). */
export function messagePage(title: string, message: string, csrf?: string): string {
  return layout(title, html`<p class="error">${message}</p><p><a href="/admin">Back to the dashboard</a></p>`, csrf);
}

/** What the overview shows. */
export interface OverviewData {
  counts: Record<string, number>;
  events: EventSummary[];
  nextCursor: number | undefined;
  filter: { status?: string; source?: string; type?: string; q?: string; live?: string; parked?: string };
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

function filterLink(filter: OverviewData['filter'], change: Partial<OverviewData['filter']> & { cursor?: number }): string {
  const params = new URLSearchParams();
  const merged = { ...filter, ...change };
  for (const [key, value] of Object.entries(merged)) if (value !== undefined && value !== '') params.set(key, String(value));
  const query = params.toString();
  return query ? `/admin?${query}` : '/admin';
}

function eventsTable(events: EventSummary[], filtered: boolean, now: number): SafeHtml {
  if (events.length === 0)
    return filtered
      ? html`<p>No events match these filters. <a href="/admin">Clear them</a>.</p>`
      : html`<p>No events yet. Send one with <code>hookrun send auth user.created</code>.</p>`;
  return html`<div class="scroll"><table id="events"><thead><tr><th>id</th><th>received (UTC)</th><th class="wide">source</th><th>type</th><th>status</th><th class="wide">attempts</th><th class="wide">last error</th></tr></thead><tbody>
${events.map((e) => html`<tr data-event-id="${e.id}"><td><a href="/admin/events/${e.id}">${e.id}</a></td><td>${when(e.receivedAt, now)}</td><td class="wide">${e.source}</td><td><a href="/admin/events/${e.id}">${e.type}</a></td><td>${status(e.status)}</td><td class="num wide">${e.attempts}</td><td class="wide">${e.lastError ? e.lastError.slice(0, 120) : ''}</td></tr>`)}
</tbody></table></div>`;
}

function searchForm(filter: OverviewData['filter']): SafeHtml {
  const keep = (['status', 'source', 'live'] as const).map((k) => (filter[k] ? html`<input type="hidden" name="${k}" value="${filter[k]}">` : ''));
  return html`<form class="search" method="get" action="/admin" role="search">${keep}
<input type="search" name="q" value="${filter.q ?? ''}" placeholder="id, key (evt_…, msg_…) or type prefix" aria-label="search" size="32">
<input type="text" name="type" value="${filter.type ?? ''}" placeholder="exact type, e.g. invoice.paid" aria-label="type" size="24">
<button type="submit">Search</button>${filter.q || filter.type ? html` <a href="${filterLink(filter, { q: undefined, type: undefined })}">clear</a>` : ''}</form>`;
}

function jobAction(job: string, action: 'run' | 'pause' | 'resume', label: string, csrf: string): SafeHtml {
  return html`<form method="post" action="/admin/cron/${job}/${action}" class="inline"><input type="hidden" name="csrf" value="${csrf}"><button data-action="${action}">${label}</button></form>`;
}

function jobsTable(jobs: JobStatus[], csrf: string): SafeHtml {
  if (jobs.length === 0) return html`<p>No cron jobs.</p>`;
  return html`<div class="scroll"><table id="jobs"><thead><tr><th>job</th><th>schedule</th><th>next runs</th><th>last run</th><th></th></tr></thead><tbody>
${jobs.map(
  (
    j,
  ) => html`<tr data-job="${j.name}"><td>${j.path}</td><td><code>${j.schedule ?? 'not scheduled'}</code>${j.schedule ? html` <small>${j.timezone}</small>` : ''}</td>
<td>${j.pausedAt ? html`<b>paused</b> since ${time(j.pausedAt)}` : j.nextRuns.map((d) => html`${time(d)}<br>`)}</td>
<td>${j.lastRun ? html`${status(j.lastRun.status)} ${time(j.lastRun.startedAt)} (${j.lastRun.trigger}${j.attempts > 1 ? `, attempt ${j.lastRun.attempt}/${j.attempts}` : ''})` : 'never'}</td>
<td>${jobAction(j.name, 'run', 'Run now', csrf)} ${j.schedule ? (j.pausedAt ? jobAction(j.name, 'resume', 'Resume', csrf) : jobAction(j.name, 'pause', 'Pause', csrf)) : ''}</td></tr>`,
)}
</tbody></table></div>`;
}

function runsTable(runs: CronRunRow[]): SafeHtml {
  if (runs.length === 0) return html`<p>No runs yet.</p>`;
  return html`<div class="scroll"><table id="runs"><thead><tr><th>id</th><th>job</th><th>trigger</th><th>tick</th><th>attempt</th><th>started (UTC)</th><th>status</th><th>ms</th><th>instance</th><th>error</th><th>output</th></tr></thead><tbody>
${runs.map((r) => html`<tr><td>${r.id}</td><td>${r.job}</td><td>${r.trigger}</td><td>${r.scheduledFor ? time(r.scheduledFor) : ''}</td><td class="num">${r.attempt}</td><td>${time(r.startedAt)}</td><td>${status(r.status)}</td><td class="num">${r.durationMs ?? ''}</td><td>${r.instance ?? ''}</td><td>${r.error ? r.error.slice(0, 120) : ''}</td><td>${r.output ? html`<details><summary>${r.output.split('\n').length} lines</summary><pre>${r.output}</pre></details>` : ''}</td></tr>`)}
</tbody></table></div>`;
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

function attemptsTable(history: EventAttempt[], now: number): SafeHtml {
  if (history.length === 0) return html`<p>Not processed yet.</p>`;
  return html`<div class="scroll"><table id="attempts"><thead><tr><th>#</th><th>handler</th><th>started (UTC)</th><th>ms</th><th>outcome</th><th>error</th></tr></thead><tbody>
${history.map((a) => html`<tr><td class="num">${a.attempt}</td><td>${a.handler ?? ''}</td><td>${when(a.startedAt, now)}</td><td class="num">${a.durationMs}</td><td>${status(a.outcome)}</td><td>${a.error ?? ''}</td></tr>`)}
</tbody></table></div>`;
}

/** With several handlers on the event: which to run again (all, or one by name). */
function handlerChoice(history: EventAttempt[]): SafeHtml | string {
  const names = [...new Set(history.map((a) => a.handler).filter((h): h is string => h !== null))].sort();
  if (names.length < 2) return '';
  return html` <select name="handler" aria-label="handler"><option value="">all</option>${names.map((n) => html`<option value="${n}">only ${n}</option>`)}</select>`;
}

/** A mirror table (users, customers, …) as the handlers left it, most recently changed first, searchable. */
export function mirrorPage(table: string, rows: Array<Record<string, unknown>>, search: string | undefined, csrf: string): string {
  const columns = MIRROR_TABLES[table as keyof typeof MIRROR_TABLES] as readonly string[];
  const cell = (value: unknown) => (value instanceof Date ? time(value) : value === null || value === undefined ? '' : String(value));
  const body = html`<p>${Object.keys(MIRROR_TABLES).map((t, i) => html`${i ? ' · ' : ''}${t === table ? html`<b>${t}</b>` : html`<a href="/admin/mirror/${t}">${t}</a>`}`)}</p>
<form class="search" method="get" action="/admin/mirror/${table}" role="search"><input type="search" name="search" value="${search ?? ''}" placeholder="id, email, name or *_id contains" aria-label="search" size="32"><button type="submit">Search</button></form>
${
  rows.length === 0
    ? html`<p>No rows${search ? ' match' : html` yet. Send one with <code>hookrun send --story</code>`}.</p>`
    : html`<div class="scroll"><table id="mirror"><thead><tr>${columns.map((c) => html`<th>${c}</th>`)}</tr></thead><tbody>
${rows.map((r) => html`<tr>${columns.map((c) => html`<td>${cell(r[c])}</td>`)}</tr>`)}
</tbody></table></div>`
}`;
  return layout(`Mirror: ${table}`, body, csrf);
}

/** What a replay led to, read from the event as it is now (the worker may already have run it). */
export function replayOutcome(event: EventDetail): string {
  if (event.status === 'pending' || event.status === 'processing') return `Replayed: back in the queue (now ${event.status}). Reload to see how it ends.`;
  if (event.status === 'processed' || event.status === 'ignored') return `Replayed: it ran again and is ${event.status}.`;
  return `Replayed, but it ran again and is ${event.status}: ${event.lastError ?? 'no message'}`;
}

/** One event: its fields, last error, a replay button and the payload (folded, with a raw JSON link). */
export function eventPage(event: EventDetail, history: EventAttempt[], csrf: string, now: number, notice?: string): string {
  const payload = JSON.stringify(event.payload, null, 2);
  const failedAgain = notice !== undefined && (event.status === 'dead' || event.status === 'failed');
  const body = html`${notice ? html`<p class="${failedAgain ? 'error' : 'notice'}" role="status">${notice}</p>` : ''}
<h2>Event ${event.id}</h2><dl>
<dt>source</dt><dd>${event.source}</dd><dt>type</dt><dd>${event.type}</dd><dt>key</dt><dd><code>${event.key}</code></dd>
<dt>status</dt><dd id="event-status">${status(event.status)}</dd><dt>attempts</dt><dd>${event.attempts}</dd>
<dt>received</dt><dd>${when(event.receivedAt, now)}</dd><dt>next attempt</dt><dd>${when(event.nextAttemptAt, now)}</dd><dt>processed</dt><dd>${when(event.processedAt, now)}</dd>
<dt>last error</dt><dd>${event.lastError ?? '-'}</dd></dl>
<h2>Attempts</h2>${attemptsTable(history, now)}
<form method="post" action="/admin/events/${event.id}/replay"><input type="hidden" name="csrf" value="${csrf}"><p><button type="submit">Replay</button>${handlerChoice(history)} puts it back in the queue (handlers are idempotent).</p></form>
<details open id="payload-box"><summary><b>Payload</b> (${Buffer.byteLength(payload)} bytes as shown) · <a href="/admin/events/${event.id}/payload.json">raw JSON</a> (to copy or save)</summary><pre id="payload">${payload}</pre></details>`;
  return layout(`Event ${event.id}`, body, csrf);
}
