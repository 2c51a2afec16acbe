import { html, type SafeHtml } from '../html.js';
import { DEFAULT_RATE, MAX_RATE, MIN_RATE, type ReplayBatch } from '../../replay/batches.js';
import type { FailedAgainEvent, ReplayOutcome } from '../../replay/outcomes.js';
import type { ReplayPlan } from '../../replay/plan.js';
import { flash, type Flash } from './flash.js';
import { layout, status, when } from './layout.js';

/** Scoped styles: the progress bar, and the forms' fields stacked on a phone. */
const STYLE = html`<style>
#replay progress{width:100%;max-width:480px;height:18px}#replay form.start{background:#fff;padding:12px;display:flex;gap:8px 16px;flex-wrap:wrap;align-items:end}
#replay form.start label{display:flex;flex-direction:column;gap:2px}#replay ul.plan{background:#fff;margin:0;padding:12px 28px}
</style>`;

/** The dry run of a selection, with the handler choice, the rate and the Start button (fields kept as hidden inputs). */
export function newReplayPage(input: {
  description: string;
  fields: Array<[string, string]>;
  plan: ReplayPlan;
  handlerNames: string[];
  runHandler?: string;
  csrf: string;
}): string {
  const { plan } = input;
  const skipped = plan.skipped.map((s) => html`<li data-skip="${s.reason}"><b>${s.count}</b> skipped: ${s.text}</li>`);
  const handlers =
    plan.handlers.length === 0
      ? html`<li>No handler would run (no handler takes these events${plan.handlersFrom === 'history' ? ', or none ran on them before' : ''}).</li>`
      : plan.handlers.map((h) => html`<li data-handler="${h.name}"><b>${h.name}</b> on ${h.events} event(s)</li>`);
  const hidden = input.fields.map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`);
  const options = input.handlerNames.map((name) => html`<option value="${name}" ${name === input.runHandler ? 'selected' : ''}>only ${name}</option>`);
  const form =
    plan.replayable === 0
      ? html`<p class="error">Nothing to replay: no event matches now${plan.skipped.length ? ' that is not skipped' : ''}. <a href="/admin/events">Back to the events</a>.</p>`
      : html`<form class="start" method="post" action="/admin/replays"><input type="hidden" name="csrf" value="${input.csrf}">${hidden}
<label>Handlers <select name="run_handler" id="run-handler"><option value="">all of each event's</option>${options}</select></label>
<label>Rate (events per second) <input type="number" name="rate" id="rate" value="${DEFAULT_RATE}" min="${MIN_RATE}" max="${MAX_RATE}" required></label>
<button type="submit" id="start">Start replay of ${plan.replayable} event(s)</button></form>`;
  const body = html`${STYLE}<div id="replay"><h2>Dry run</h2>
<p id="selection">Selection: <b>${input.description}</b>${input.runHandler ? html`, only handler <b>${input.runHandler}</b>` : ''}. Nothing has been written yet.</p>
<ul class="plan" id="plan"><li id="matched"><b>${plan.matched}</b> event(s) match (ids up to ${plan.maxEventId}; later ones are not taken)</li>
<li id="replayable"><b>${plan.replayable}</b> would go back to the queue, due now, attempts reset</li>${skipped}</ul>
<h2>Handlers that would run${plan.handlersFrom === 'history' ? ' (from these events’ history)' : ''}</h2><ul class="plan" id="handlers">${handlers}</ul>
<h2>Start</h2>${form}</div>`;
  return layout('New bulk replay', body, input.csrf, undefined, 'replays');
}

/** A bulk replay's outcome: how many succeeded (green), failed again (red, linked to the list of them), are still unfinished (amber). */
export function outcomeBadges(batchId: number, outcome: ReplayOutcome | undefined): SafeHtml {
  if (!outcome) return html`<span class="outcome">-</span>`;
  const failed =
    outcome.failedAgain > 0
      ? html` <a class="status t-failure" data-outcome="failed-again" href="/admin/replays/${batchId}#failed-again">${outcome.failedAgain} failed again</a>`
      : '';
  const unfinished = outcome.unfinished > 0 ? html` <span class="status t-warning" data-outcome="unfinished">${outcome.unfinished} unfinished</span>` : '';
  return html`<span class="outcome"><span class="status t-success" data-outcome="succeeded">${outcome.succeeded} succeeded</span>${failed}${unfinished}</span>`;
}

/** The events a replay put back that failed again, each linked to its page (where its error and Replay are). */
function failedAgainList(batchId: number, outcome: ReplayOutcome | undefined, failed: FailedAgainEvent[]): SafeHtml | '' {
  if (failed.length === 0) return '';
  const more = (outcome?.failedAgain ?? 0) > failed.length ? html`<p>The first ${failed.length} of ${outcome!.failedAgain} are shown.</p>` : '';
  return html`<section id="failed-again"><h2>Failed again</h2><div class="scroll"><table id="failed-again-events"><thead><tr><th>event</th><th>type</th><th>status</th><th class="wide">last error</th></tr></thead><tbody>
${failed.map((e) => html`<tr data-event-id="${e.id}"><td class="id"><a href="/admin/events/${e.id}">${e.id}</a></td><td class="type" title="${e.source} ${e.type}">${e.type}</td><td>${status(e.status)}</td><td class="wide clip" title="${e.lastError ?? ''}">${e.lastError ?? ''}</td></tr>`)}
</tbody></table></div>${more}<p><a href="/admin/replays/new?status=dead">Replay the dead events</a> once the cause is fixed (batch ${batchId}'s included).</p></section>`;
}

/** One bulk replay: progress, how its events ended (the failed-again ones listed), who started it and when, what it takes, and Cancel while it runs (refreshing itself meanwhile). */
export function replayPage(
  batch: ReplayBatch,
  result: { outcome?: ReplayOutcome; failed: FailedAgainEvent[] },
  csrf: string,
  now: number,
  notice?: Flash,
): string {
  const running = batch.status === 'running';
  const cancel = running
    ? html`<form method="post" action="/admin/replays/${batch.id}/cancel"><input type="hidden" name="csrf" value="${csrf}"><p><button type="submit" id="cancel">Cancel</button> stops it; events already put back stay so.</p></form>`
    : '';
  const body = html`${STYLE}<div id="replay">${flash(notice)}

<p><progress id="progress" max="${Math.max(batch.total, batch.replayed, 1)}" value="${batch.replayed}"></progress></p>
<dl><dt>status</dt><dd id="replay-status">${status(batch.status)}</dd>
<dt>replayed</dt><dd id="replayed">${batch.replayed} of ${batch.total} put back</dd>
<dt>outcome</dt><dd id="replay-outcome">${outcomeBadges(batch.id, result.outcome)}</dd>
<dt>rate</dt><dd>${batch.rate} per second</dd>
<dt>selection</dt><dd id="replay-selection">${batch.description}</dd>
<dt>handlers</dt><dd>${batch.handler ? html`only ${batch.handler}` : 'all of each event’s'}</dd>
<dt>events up to id</dt><dd>${batch.maxEventId}</dd>
<dt>started by</dt><dd id="actor">${batch.actor}</dd><dt>started</dt><dd>${when(batch.createdAt, now)}</dd>
<dt>finished</dt><dd>${when(batch.finishedAt, now)}</dd></dl>${cancel}
${failedAgainList(batch.id, result.outcome, result.failed)}<p><a href="/admin/replays">All bulk replays</a></p></div>`;
  return layout(`Bulk replay ${batch.id}`, body, csrf, running ? 2 : undefined, 'replays');
}

/** Every bulk replay, newest first (who, when, what, how far, how it ended); the audit has each start and cancel beside every other action. */
export function replaysPage(batches: ReplayBatch[], outcomes: Map<number, ReplayOutcome>, csrf: string, now: number): string {
  const rows: SafeHtml | SafeHtml[] =
    batches.length === 0
      ? html`<tr><td colspan="8">No bulk replays yet. Start one from the <a href="/admin/events">events</a> list (select, then “Replay these”).</td></tr>`
      : batches.map(
          (b) =>
            html`<tr data-replay-id="${b.id}"><td class="id"><a href="/admin/replays/${b.id}">${b.id}</a></td><td>${when(b.createdAt, now)}</td><td class="wide">${b.actor}</td><td class="wide clip" title="${b.description}">${b.description}</td><td class="wide">${b.handler ?? 'all'}</td><td class="num">${b.replayed}/${b.total}</td><td>${status(b.status)}</td><td>${outcomeBadges(b.id, outcomes.get(b.id))}</td></tr>`,
        );
  const body = html`<p>Who replayed what, when, and how far it got (every action, these too, is in the <a href="/admin/audit">audit</a>). A new one starts from a selection: <a href="/admin/replays/new?status=dead">replay the dead events</a>, or filter the <a href="/admin/events">events</a> first.</p>
<div class="scroll"><table id="replays"><thead><tr><th>id</th><th>started (UTC)</th><th class="wide">by</th><th class="wide">selection</th><th class="wide">handlers</th><th>put back</th><th>status</th><th>outcome</th></tr></thead><tbody>${rows}</tbody></table></div>`;
  return layout('Bulk replays', body, csrf, batches.some((b) => b.status === 'running') ? 5 : undefined, 'replays');
}
