import type { Hono } from 'hono';
import type { JobStatus } from '../../cron/cron-service.js';
import { AppError } from '../../errors.js';
import type { AdminApiDeps } from '../admin.js';
import { csrfOf, page } from './http.js';
import { messagePage } from './layout.js';
import type { CronRunRow } from '../../db/cron-runs.js';
import { html, type SafeHtml } from '../html.js';
import { status, time } from './layout.js';

function jobAction(job: string, action: 'run' | 'pause' | 'resume', label: string, csrf: string): SafeHtml {
  return html`<form method="post" action="/admin/cron/${job}/${action}" class="inline"><input type="hidden" name="csrf" value="${csrf}"><button data-action="${action}">${label}</button></form>`;
}

export function jobsTable(jobs: JobStatus[], csrf: string): SafeHtml {
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

export function runsTable(runs: CronRunRow[]): SafeHtml {
  if (runs.length === 0) return html`<p>No runs yet.</p>`;
  return html`<div class="scroll"><table id="runs"><thead><tr><th>id</th><th>job</th><th>trigger</th><th>tick</th><th>attempt</th><th>started (UTC)</th><th>status</th><th>ms</th><th>instance</th><th>error</th><th>output</th></tr></thead><tbody>
${runs.map((r) => html`<tr><td>${r.id}</td><td>${r.job}</td><td>${r.trigger}</td><td>${r.scheduledFor ? time(r.scheduledFor) : ''}</td><td class="num">${r.attempt}</td><td>${time(r.startedAt)}</td><td>${status(r.status)}</td><td class="num">${r.durationMs ?? ''}</td><td>${r.instance ?? ''}</td><td>${r.error ? r.error.slice(0, 120) : ''}</td><td>${r.output ? html`<details><summary>${r.output.split('\n').length} lines</summary><pre>${r.output}</pre></details>` : ''}</td></tr>`)}
</tbody></table></div>`;
}

/** POST /admin/cron/{job}/run|pause|resume: the jobs table's buttons. */
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
        deps.log.info({ job, action, did }, 'cron job controlled from the dashboard');
        return c.redirect(`/admin?job=${encodeURIComponent(job)}&did=${did}`, 303);
      } catch (error) {
        if (error instanceof AppError) return page(c, messagePage('Not done', error.message, csrfOf(c, deps)), error.status);
        throw error;
      }
    });
  }
}

const CRON_NOTICES: Record<string, string> = {
  succeeded: 'ran and succeeded',
  failed: 'ran and failed',
  skipped: 'is already running (recorded as skipped)',
  queued: 'is running; this run waits behind it',
  paused: 'is paused on every instance',
  resumed: 'is resumed',
};

/** The line shown after a job button, for a job that exists. */
export function cronNotice(job: string | undefined, did: string | undefined, jobs: Array<{ name: string }>): string | undefined {
  if (!job || !did || !Object.hasOwn(CRON_NOTICES, did) || !jobs.some((j) => j.name === job)) return undefined;
  return `${job} ${CRON_NOTICES[did]}.`;
}
