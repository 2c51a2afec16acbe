import type { JobStatus } from '../../cron/cron-service.js';
import type { HandlerOverview } from '../../inbox/handler-overview.js';
import { html, type SafeHtml } from '../html.js';
import { TONE_CLASS, type Tone } from './flash.js';

/** The overview's one-word answer to "is it working?": nothing wrong, something wants a look, or something fails now. */
export type VerdictLevel = 'healthy' | 'degraded' | 'failing';

/** One thing behind a verdict, and the page where it is looked at. */
export interface VerdictReason {
  text: string;
  href: string;
}

/** The verdict and what makes it, most urgent first (empty when healthy). */
export interface Verdict {
  level: VerdictLevel;
  reasons: VerdictReason[];
}

/** What the verdict is read from: the overview's own counts, so the headline and the numbers under it never disagree. */
export interface VerdictInput {
  counts: Record<string, number>;
  handlers: HandlerOverview[];
  jobs: JobStatus[];
  issues: Record<string, number>;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const page = (name: string) => encodeURIComponent(name);

/** What fails now: open issues, events failing (and retrying), jobs whose last run failed. */
function failingReasons({ counts, jobs, issues }: VerdictInput): VerdictReason[] {
  const reasons: VerdictReason[] = [];
  if ((issues.open ?? 0) > 0) reasons.push({ text: plural(issues.open!, 'open issue'), href: '/admin/issues?status=open' });
  if ((counts.failed ?? 0) > 0) reasons.push({ text: `${plural(counts.failed!, 'event')} failing (will retry)`, href: '/admin/events?status=failed' });
  for (const j of jobs.filter((j) => j.lastRun?.status === 'failed'))
    reasons.push({ text: `job ${j.name}'s last run failed`, href: `/admin/jobs/${page(j.name)}` });
  return reasons;
}

/** What wants a look but does not fail now: dead events to replay, parked deliveries, paused handlers and jobs, acknowledged issues. */
function degradedReasons({ counts, handlers, jobs, issues }: VerdictInput): VerdictReason[] {
  const reasons: VerdictReason[] = [];
  if ((counts.dead ?? 0) > 0) reasons.push({ text: `${plural(counts.dead!, 'dead event')} to look at or replay`, href: '/admin/events?status=dead' });
  for (const h of handlers.filter((h) => h.parked > 0))
    reasons.push({
      text: `handler ${h.name} has ${plural(h.parked, 'parked delivery', 'parked deliveries')}`,
      href: `/admin/events?handler=${page(h.name)}&parked=1`,
    });
  for (const h of handlers.filter((h) => h.paused)) reasons.push({ text: `handler ${h.name} is paused`, href: `/admin/handlers/${page(h.name)}` });
  for (const j of jobs.filter((j) => j.pausedAt)) reasons.push({ text: `job ${j.name} is paused`, href: `/admin/jobs/${page(j.name)}` });
  if ((issues.acknowledged ?? 0) > 0) reasons.push({ text: plural(issues.acknowledged!, 'acknowledged issue'), href: '/admin/issues?status=acknowledged' });
  return reasons;
}

/**
 * The verdict a person on call reads first: failing when something fails now
 * (an open issue, an event failing and retrying, a job whose last run failed),
 * degraded when something waits for a person (dead events, parked
 * deliveries, a pause, an acknowledged issue), healthy otherwise.
 */
export function overviewVerdict(input: VerdictInput): Verdict {
  const failing = failingReasons(input);
  const degraded = degradedReasons(input);
  if (failing.length > 0) return { level: 'failing', reasons: [...failing, ...degraded] };
  if (degraded.length > 0) return { level: 'degraded', reasons: degraded };
  return { level: 'healthy', reasons: [] };
}

const TONE: Record<VerdictLevel, Tone> = { healthy: 'success', degraded: 'warning', failing: 'failure' };
const HEADLINE: Record<VerdictLevel, string> = { healthy: 'Healthy', degraded: 'Degraded', failing: 'Failing' };

/** The verdict as the overview's first line: its word in its colour, each reason linked to where it is fixed. A live region. */
export function verdictBox(verdict: Verdict): SafeHtml {
  const reasons =
    verdict.reasons.length === 0
      ? html`nothing fails and nothing waits for a person.`
      : html`${verdict.reasons.slice(0, 6).map((r, i) => html`${i > 0 ? ' · ' : ''}<a href="${r.href}">${r.text}</a>`)}${verdict.reasons.length > 6 ? html` · and ${verdict.reasons.length - 6} more` : ''}`;
  return html`<section id="verdict" class="verdict ${TONE_CLASS[TONE[verdict.level]]}" data-verdict="${verdict.level}" data-live-region><b>${HEADLINE[verdict.level]}</b>: ${reasons}</section>`;
}
