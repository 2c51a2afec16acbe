import { html, type SafeHtml } from '../html.js';

/**
 * How something ended, as the reader sees it at a glance: a failure red, a
 * success green, something that wants a look amber, plain information grey.
 * One scale for the whole console, so a colour always means the same thing.
 */
export type Tone = 'success' | 'warning' | 'failure' | 'info';

/** The stylesheet's class for each tone (`.notice` and `.error` are the classes the console always had for the two ends). */
export const TONE_CLASS: Record<Tone, string> = { success: 'notice', warning: 'warn', failure: 'error', info: 'info' };

/** A message after an action, with the tone of its outcome. */
export interface Flash {
  text: string;
  tone: Tone;
}

/**
 * The line shown after an action: coloured by how the action ended (a job
 * that ran and failed is red), not by the fact that the button worked. A
 * failure is announced (`role="alert"`), the rest politely.
 */
export function flash(message: Flash | undefined): SafeHtml | '' {
  if (!message) return '';
  return html`<p class="flash ${TONE_CLASS[message.tone]}" data-tone="${message.tone}" role="${message.tone === 'failure' ? 'alert' : 'status'}">${message.text}</p>`;
}

/** The tone of a status word the console shows (an event's, a delivery's, a run's, a replay's). */
export function toneOfStatus(status: string): Tone {
  if (status === 'processed' || status === 'succeeded' || status === 'done' || status === 'resolved') return 'success';
  if (status === 'dead' || status === 'failed' || status === 'open') return 'failure';
  if (status === 'pending' || status === 'running' || status === 'processing' || status === 'parked' || status === 'acknowledged') return 'warning';
  return 'info';
}
