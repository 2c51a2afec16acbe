import type { Context, Hono } from 'hono';
import type { JobStatus } from '../../cron/cron-service.js';
import type { BackfillPlan } from '../../cron/controls.js';
import { tickInZone } from '../../cron/time-zone.js';
import type { CronRunRow } from '../../cron/runs-sql.js';
import { AppError } from '../../errors.js';
import type { AdminApiDeps } from '../admin.js';
import { requestInstant } from '../admin-request.js';
import { html, type SafeHtml } from '../html.js';
import { csrfOf, formField, page } from './http.js';
import { flash, type Flash } from './flash.js';
import { cronNotice, jobButtons, jobsTable, nextRunsText, runsTable, scheduleText } from './jobs.js';
import { layout, messagePage, status, time } from './layout.js';

/** Runs a job page shows at a time; older ones are a link away. */
const RUNS_PER_PAGE = 50;

/** The backfill form: a range of past ticks to run (each once), or only to list. */
function backfillForm(job: JobStatus, csrf: string, typed: { from?: string; to?: string } = {}): SafeHtml {
  if (!job.schedule) return html`<p>Not scheduled in platform.json, so there are no ticks to backfill.</p>`;
  return html`<form method="post" action="/admin/jobs/${encodeURIComponent(job.name)}/backfill" class="search" id="backfill"><input type="hidden" name="csrf" value="${csrf}">
<label>from (UTC) <input type="datetime-local" name="from" value="${typed.from ?? ''}" required></label><label>to (UTC) <input type="datetime-local" name="to" value="${typed.to ?? ''}" required></label>
<label><input type="checkbox" name="dryRun" value="1"> only list the ticks</label><button type="submit">Backfill</button></form>
<p><small>Runs each tick of <code>${job.schedule}</code> (${job.timezone}) in the range that has no run yet, oldest first; a tick that already ran is left alone.</small></p>`;
}

/** A dry run's answer: each tick in the job's zone, and whether it already has a run. */
function planList(plan: BackfillPlan, zone: string): SafeHtml {
  return html`<section id="backfill-plan"><h2>Backfill plan (nothing queued)</h2><p>${plan.ticks.length} tick(s), ${plan.ticks.filter((t) => !t.hasRun).length} without a run:</p>
<ul>${plan.ticks.map((t) => html`<li>${tickInZone(t.at, zone)}: ${t.hasRun ? 'has a run' : 'would run'}</li>`)}</ul></section>`;
}

/** One job: schedule in its zone, next runs, buttons, backfill, and its history with each run's output. */
export function jobPage(job: JobStatus, runs: CronRunRow[], more: number | undefined, csrf: string, extra: { notice?: Flash; plan?: BackfillPlan }): string {
  const body = html`${flash(extra.notice)}<p><a href="/admin/jobs">← All jobs</a></p>
<div id="job-region" data-live-region><dl id="job"><dt>state</dt><dd id="job-state">${job.pausedAt ? html`<b>paused</b> since ${time(job.pausedAt)}` : 'active'} ${jobButtons(job, csrf)}</dd>
<dt>last run</dt><dd>${job.lastRun ? html`${status(job.lastRun.status)} ${time(job.lastRun.startedAt)}` : 'never'}</dd>
<dt>description</dt><dd>${job.description || '-'}</dd><dt>schedule</dt><dd>${scheduleText(job)}</dd><dt>next runs</dt><dd>${nextRunsText(job)}</dd>
<dt>overlap</dt><dd>${job.overlap}</dd><dt>attempts per tick</dt><dd>${job.attempts}</dd><dt>time limit</dt><dd>${Math.round(job.timeoutMs / 1000)} s</dd></dl>
<h2>History</h2>${runsTable(runs)}${more !== undefined ? html`<p><a href="/admin/jobs/${encodeURIComponent(job.name)}?before=${more}">Older runs →</a></p>` : ''}</div>
${extra.plan ? planList(extra.plan, job.timezone) : ''}<h2>Backfill</h2>${backfillForm(job, csrf, extra.plan && { from: extra.plan.from.slice(0, 16), to: extra.plan.to.slice(0, 16) })}`;
  return layout(`Job ${job.name}`, body, csrf, undefined, 'jobs');
}

/** A time typed in the form: `datetime-local` sends no offset, read as UTC (the one rule of time/instant.ts), as the form says. */
const formTime = (text: string | undefined, name: string): Date => requestInstant(text ?? '', name);

async function jobOrNotFound(c: Context, deps: AdminApiDeps): Promise<{ job?: JobStatus; jobs: JobStatus[]; response?: Response }> {
  const jobs = await deps.cron.listJobs(5);
  const job = jobs.find((j) => j.name === c.req.param('name'));
  if (job) return { job, jobs };
  const message = `No job "${(c.req.param('name') ?? '').slice(0, 100)}". Jobs: ${jobs.map((j) => j.name).join(', ') || 'none'}.`;
  return { jobs, response: page(c, messagePage('Not found', message, csrfOf(c, deps)), 404) };
}

async function showJob(c: Context, deps: AdminApiDeps, plan?: BackfillPlan): Promise<Response> {
  const { job, jobs, response } = await jobOrNotFound(c, deps);
  if (!job) return response!;
  const before = /^\d{1,15}$/.test(c.req.query('before') ?? '') ? Number(c.req.query('before')) : undefined;
  const runs = await deps.cron.listRuns({ job: job.name, limit: RUNS_PER_PAGE + 1, beforeId: before });
  const shown = runs.slice(0, RUNS_PER_PAGE);
  const more = runs.length > RUNS_PER_PAGE ? shown[shown.length - 1]!.id : undefined;
  const queued = c.req.query('queued');
  const text = cronNotice(c.req.query('job'), c.req.query('did'), jobs);
  const withQueued = text && c.req.query('did') === 'backfilled' && /^\d+$/.test(queued ?? '') ? { ...text, text: `${text.text} (${queued} run(s))` } : text;
  return page(c, jobPage(job, shown, more, csrfOf(c, deps), { notice: withQueued, plan }));
}

/** GET /admin/jobs, /admin/jobs/{name}; POST /admin/jobs/{name}/backfill. */
export function addJobPages(app: Hono, deps: AdminApiDeps): void {
  app.get('/jobs', async (c) => {
    const jobs = await deps.cron.listJobs(3);
    const body = html`<p>Every cron job: its schedule in its own time zone, the next runs, the last run. A job's page has its history, each run's output, and backfill.</p>${jobsTable(jobs, csrfOf(c, deps))}`;
    return page(c, layout('Jobs', body, csrfOf(c, deps), undefined, 'jobs'));
  });
  app.get('/jobs/:name', (c) => showJob(c, deps));
  app.post('/jobs/:name/backfill', async (c) => {
    const name = c.req.param('name');
    try {
      const range = { from: formTime(await formField(c, 'from'), 'from'), to: formTime(await formField(c, 'to'), 'to') };
      const dryRun = (await formField(c, 'dryRun')) === '1';
      const plan = await deps.cron.backfill(name, { ...range, dryRun });
      if (dryRun) return showJob(c, deps, plan);
      deps.log.info({ job: name, from: plan.from, to: plan.to, queued: plan.queued }, 'cron ticks backfilled from the console');
      return c.redirect(`/admin/jobs/${encodeURIComponent(name)}?job=${encodeURIComponent(name)}&did=backfilled&queued=${plan.queued}`, 303);
    } catch (error) {
      if (error instanceof AppError) return page(c, messagePage('Not backfilled', error.message, csrfOf(c, deps)), error.status);
      throw error;
    }
  });
}
