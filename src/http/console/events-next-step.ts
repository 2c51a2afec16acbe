import type { EventDelivery } from '../../db/event-history.js';
import type { EventDetail } from '../../db/events.js';
import { html, type SafeHtml } from '../html.js';
import { when } from './layout.js';

/** A handler of the event as its page needs it: paused or not, its flow options in one line. */
export interface HandlerState {
  name: string;
  paused: boolean;
  /** "concurrency 5 per key · rate 100/1s"; null without flow options. */
  flow: string | null;
  /** Whether this hookrun runs it (a handler renamed or removed is not: its deliveries wait for it). */
  loaded: boolean;
}

/** What the next-step line reads. */
interface NextStepInput {
  event: EventDetail;
  deliveries: EventDelivery[];
  handlers: HandlerState[];
  maxAttempts: number | undefined;
  csrf: string;
  now: number;
}

const of = (n: number, max: number | undefined) => (max ? `attempt ${n} of ${max}` : `attempt ${n}`);

function replayButton(id: number, csrf: string, label: string, handler?: string): SafeHtml {
  return html`<form method="post" action="/admin/events/${id}/replay"><input type="hidden" name="csrf" value="${csrf}">${handler ? html`<input type="hidden" name="handler" value="${handler}">` : ''}<button type="submit" class="next-replay">${label}</button></form>`;
}

/** Why one pending delivery has not started: its handler paused, a time it waits for, its flow limits, or nothing (it starts now). */
function waitReason(d: EventDelivery, handlers: HandlerState[], now: number): SafeHtml {
  const handler = handlers.find((h) => h.name === d.handler);
  const key = d.flowKey ? html` (key <code>${d.flowKey}</code>)` : '';
  if (handler && !handler.loaded)
    return html`<b>${d.handler}</b> is not a handler this hookrun runs (renamed or removed?): its delivery waits until one with <code>handlers/${d.handler}</code> runs; restore the file, or leave it.`;
  if (handler?.paused) return html`<b>${d.handler}</b> is paused: it starts when resumed on the <a href="/admin/handlers">Handlers</a> page.`;
  if (d.runAfter.getTime() > now) return html`<b>${d.handler}</b>${key} starts ${when(d.runAfter, now)}: a debounce's quiet period or a batch's wait.`;
  if (!handler?.flow) return html`<b>${d.handler}</b>${key} is queued: a worker picks it up now${d.flowKey ? ', after the earlier changes of its row' : ''}.`;
  return html`<b>${d.handler}</b>${key} waits its turn under its flow control (${handler.flow}): earlier events of its key or its limits go first.`;
}

/** One delivery still owed: running, retrying or waiting, as a sentence. */
function owed(d: EventDelivery, input: NextStepInput): SafeHtml {
  const { now, maxAttempts } = input;
  if (d.status === 'running') return html`<b>${d.handler}</b> is running now (${of(d.attempts, maxAttempts)}).`;
  if (d.status === 'failed') return html`<b>${d.handler}</b> retries ${when(d.runAfter, now)} (${of(d.attempts + 1, maxAttempts)}).`;
  return waitReason(d, input.handlers, now);
}

/** The line that says what happens next, or what a person should do, for the event's state: one sentence per delivery that needs one. */
export function nextStep(input: NextStepInput): SafeHtml {
  const { event, csrf } = input;
  const parked = input.deliveries.filter((d) => d.status === 'parked');
  const line = (content: SafeHtml | string) => html`<div id="next-step"><b>Next:</b> ${content}</div>`;
  if (parked.length > 0)
    return line(
      html`${parked.map((d) => html`<b>${d.handler}</b> parked it: an ordered handler out of attempts, so later events of its key${d.flowKey ? html` <code>${d.flowKey}</code>` : ''} went on without it. Fix ${d.handler}, then replay it: ${replayButton(event.id, csrf, `Replay for ${d.handler}`, d.handler)} `)}`,
    );
  const open = input.deliveries.filter((d) => d.status === 'pending' || d.status === 'running' || d.status === 'failed');
  if (open.length > 0) return line(html`${open.map((d) => html`${owed(d, input)} `)}`);
  switch (event.status) {
    case 'dead': {
      const dead = input.deliveries.filter((d) => d.status === 'dead');
      return line(
        html`${dead.map((d) => html`<b>${d.handler}</b> is dead after ${d.attempts} attempts: no more retries. `)}Fix the cause (the error below), then ${replayButton(event.id, csrf, 'Replay')}`,
      );
    }
    case 'pending':
      return line('queued: a worker turns it into its handlers\u2019 deliveries now.');
    case 'processed':
      return line('done: every handler ran it. Nothing to do.');
    case 'ignored':
      return line('done: no handler takes this type, so it was ignored. Nothing to do.');
    default:
      return line(html`status ${event.status}.`);
  }
}
