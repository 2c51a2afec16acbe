import type { Hono } from 'hono';
import type { JobStatus } from '../../cron/cron-service.js';
import { tickInZone } from '../../cron/time-zone.js';
import { AppError } from '../../errors.js';
import type { AdminApiDeps } from '../admin.js';
import { csrfOf, page } from './http.js';
import { messagePage } from './layout.js';
import type { CronRunRow } from '../../cron/runs-sql.js';
import { html, type SafeHtml } from '../html.js';
import type { Flash, Tone } from './flash.js';
import { status, time } from './layout.js';

/** A Run now / Pause / Resume button: a form with the session's CSRF token. */
export function jobAction(job: string, action: 'run' | 'pause' | 'resume', label: string, csrf: string): SafeHtml {
  return html`<form method="post" action="/admin/cron/${encodeURIComponent(job)}/${action}" class="inline"><input type="hidden" name="csrf" value="${csrf}"><button data-action="${action}">${label}</button></form>`;
}

/** Run now, and Pause or Resume for a scheduled job. */
export const jobButtons = (j: JobStatus, csrf: string) =>
  html`${jobAction(j.name, 'run', 'Run now', csrf)} ${j.schedule ? (j.pausedAt ? jobAction(j.name, 'resume', 'Resume', csrf) : jobAction(j.name, 'pause', 'Pause', csrf)) : ''}`;

/** The expression and the zone it is read in. */
export const scheduleText = (j: JobStatus) => (j.schedule ? html`<code>${j.schedule}</code> <small>${j.timezone}</small>` : 'not scheduled');

/** "paused since …", or the next runs in the job's own zone. */
export const nextRunsText = (j: JobStatus) =>
  j.pausedAt ? html`<b>paused</b> since ${time(j.pausedAt)}` : j.nextRuns.length === 0 ? '-' : j.nextRuns.map((d) => html`${tickInZone(d, j.timezone)}<br>`);

/** The last run's status, or paused. */
const jobState = (j: JobStatus) =>
  html`${j.pausedAt ? html`<b>paused</b> ` : ''}${j.lastRun ? html`${status(j.lastRun.status)}<span class="wide"> ${time(j.lastRun.startedAt)} (${j.lastRun.trigger}${j.attempts > 1 ? `, attempt ${j.lastRun.attempt}/${j.attempts}` : ''})</span>` : 'never run'}`;

/** Every job: schedule in its zone, next runs, last run, buttons. A live region. */
export function jobsTable(jobs: JobStatus[], csrf: string): SafeHtml {
  if (jobs.length === 0) return html`<p id="jobs-region" data-live-region>No cron jobs.</p>`;
  return html`<div class="scroll" id="jobs-region" data-live-region><table id="jobs"><thead><tr><th>job</th><th class="wide">schedule</th><th class="wide">next runs</th><th>last run</th><th></th></tr></thead><tbody>
${jobs.map(
  (
    j,
  ) => html`<tr data-job="${j.name}"><td class="nowrap"><a href="/admin/jobs/${encodeURIComponent(j.name)}">${j.name}</a></td><td class="wide">${scheduleText(j)}</td>
<td class="wide">${nextRunsText(j)}</td><td class="state">${jobState(j)}</td><td class="buttons">${jobButtons(j, csrf)}</td></tr>`,
)}
</tbody></table></div>`;
}

/** A job's runs, newest first: trigger, tick, attempt, start, status, duration, instance, error, and the output (folded). */
export function runsTable(runs: CronRunRow[]): SafeHtml {
  if (runs.length === 0) return html`<p>No runs yet.</p>`;
  return html`<div class="scroll"><table id="runs"><thead><tr><th>id</th><th class="wide">trigger</th><th class="wide">tick</th><th class="wide">attempt</th><th>started (UTC)</th><th>status</th><th class="wide">ms</th><th class="wide">instance</th><th>error / output</th></tr></thead><tbody>
${runs.map(
  (
    r,
  ) => html`<tr data-run="${r.id}"><td class="id">${r.id}</td><td class="wide">${r.trigger}</td><td class="wide">${r.scheduledFor ? time(r.scheduledFor) : ''}</td><td class="num wide">${r.attempt}</td><td class="nowrap">${time(r.startedAt)}</td><td>${status(r.status)}</td><td class="num wide">${r.durationMs ?? ''}</td><td class="wide">${r.instance ?? ''}</td>
<td class="rest">${r.error ? html`<span class="run-error clip-line" title="${r.error}">${r.error.split('\n', 1)[0]!.slice(0, 300)}</span>` : ''}${r.output ? html`<details id="output-${r.id}"><summary>output (${r.output.split('\n').length} lines)</summary><pre class="output">${r.output}</pre></details>` : ''}</td></tr>`,
)}
</tbody></table></div>`;
}

/** POST /admin/cron/{job}/run|pause|resume: the job buttons; back to the job's page with a notice. */
export function addJobRoutes(app: Hono, deps: AdminApiDeps): void {
  for (const action of ['run', 'pause', 'resume'] as const) {
    app.post(`/cron/:job/${action}`, async (c) => {
      const job = c.req.param('job');
      try {
        const did =
          action === 'run'
            ? (await deps.cron.runJob(job, 'http')).status
            : action === 'pause'
              ? (await deps.cron.pause(job), 'paused')
              : (await deps.cron.resume(job), 'resumed');
        deps.log.info({ job, action, did }, 'cron job controlled from the console');
        return c.redirect(`/admin/jobs/${encodeURIComponent(job)}?job=${encodeURIComponent(job)}&did=${did}`, 303);
      } catch (error) {
        if (error instanceof AppError) return page(c, messagePage('Not done', error.message, csrfOf(c, deps)), error.status);
        throw error;
      }
    });
  }
}

/** What each job button led to, and the tone of that outcome (a run that failed is a failure, whoever pressed it). */
const CRON_NOTICES: Record<string, [string, Tone]> = {
  succeeded: ['ran and succeeded', 'success'],
  failed: ['ran and failed', 'failure'],
  skipped: ['is already running (recorded as skipped)', 'warning'],
  queued: ['is running; this run waits behind it', 'info'],
  paused: ['is paused on every instance', 'success'],
  resumed: ['is resumed', 'success'],
  backfilled: ['has its missing ticks queued; the scheduler runs them oldest first', 'success'],
};

/** The line shown after a job button, for a job that exists. */
export function cronNotice(job: string | undefined, did: string | undefined, jobs: Array<{ name: string }>): Flash | undefined {
  if (!job || !did || !Object.hasOwn(CRON_NOTICES, did) || !jobs.some((j) => j.name === job)) return undefined;
  const [text, tone] = CRON_NOTICES[did]!;
  return { text: `${job} ${text}.`, tone };
}
