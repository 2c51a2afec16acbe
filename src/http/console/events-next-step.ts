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

/** Why one waiting delivery has not started: its handler paused, a time it waits for, or its flow limits. */
function waitReason(d: EventDelivery, handlers: HandlerState[], now: number): SafeHtml {
  const handler = handlers.find((h) => h.name === d.handler);
  const key = d.flowKey ? html` (key <code>${d.flowKey}</code>)` : '';
  if (handler?.paused) return html`<b>${d.handler}</b> is paused: it starts when resumed on the <a href="/admin/handlers">Handlers</a> page.`;
  if (d.runAfter.getTime() > now)
    return html`<b>${d.handler}</b>${key} starts ${when(d.runAfter, now)}: ${d.attempts > 0 ? `a retry's backoff after attempt ${d.attempts}` : "a debounce's quiet period or a batch's wait"}.`;
  return html`<b>${d.handler}</b>${key} waits its turn under its flow control${handler?.flow ? html` (${handler.flow})` : ''}: earlier events of its key or its limits go first.`;
}

/** The line that says what happens next, or what a person should do, for the event's state. */
export function nextStep(input: NextStepInput): SafeHtml {
  const { event, csrf, now, maxAttempts } = input;
  const parked = input.deliveries.filter((d) => d.status === 'parked');
  const line = (content: SafeHtml | string) => html`<div id="next-step"><b>Next:</b> ${content}</div>`;
  if (parked.length > 0)
    return line(
      html`${parked.map((d) => html`<b>${d.handler}</b> parked it: an ordered handler out of attempts, so later events of its key${d.flowKey ? html` <code>${d.flowKey}</code>` : ''} went on without it. Fix ${d.handler}, then replay it: ${replayButton(event.id, csrf, `Replay for ${d.handler}`, d.handler)} `)}`,
    );
  switch (event.status) {
    case 'dead':
      return line(
        html`dead after ${event.attempts} attempts: no more retries. Fix the cause (the last error below), then ${replayButton(event.id, csrf, 'Replay')}`,
      );
    case 'failed':
      return line(html`retrying ${when(event.nextAttemptAt, now)} (${of(event.attempts + 1, maxAttempts)}).`);
    case 'pending':
      return line(
        event.attempts === 0
          ? html`queued: a worker picks it up ${when(event.nextAttemptAt, now)}.`
          : html`retrying ${when(event.nextAttemptAt, now)} (${of(event.attempts + 1, maxAttempts)}).`,
      );
    case 'processing':
      return line(html`a worker is running it now (${of(event.attempts, maxAttempts)}).`);
    case 'waiting': {
      const waiting = input.deliveries.filter((d) => d.status === 'waiting' || d.status === 'debounced');
      if (waiting.length === 0) return line('waiting for its handlers\u2019 flow control to hand it over.');
      return line(html`waiting: ${waiting.map((d) => html`${waitReason(d, input.handlers, now)} `)}`);
    }
    case 'processed':
      return line('done: every handler ran it. Nothing to do.');
    case 'ignored':
      return line('done: no handler takes this type, so it was ignored. Nothing to do.');
    default:
      return line(html`status ${event.status}.`);
  }
}
