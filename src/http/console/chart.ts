import type { MinuteCounts } from '../../db/events.js';
import { html, type SafeHtml } from '../html.js';

const SERIES = [
  ['received', '#2563eb'],
  ['processed', '#059669'],
  ['failed', '#d97706'],
  ['dead', '#dc2626'],
] as const;
const WIDTH = 600;
const HEIGHT = 120;

/**
 * Events per minute over the last hour as one inline SVG (no script, no
 * library, allowed by the page's CSP): a line per series, scaled to the
 * busiest minute, with a legend that gives each series' total.
 */
export function minuteChart(counts: MinuteCounts): SafeHtml {
  const minutes = counts.received.length;
  const peak = Math.max(1, ...SERIES.flatMap(([name]) => counts[name]));
  const x = (i: number) => ((i / Math.max(1, minutes - 1)) * WIDTH).toFixed(1);
  const y = (n: number) => (HEIGHT - 4 - (n / peak) * (HEIGHT - 8)).toFixed(1);
  const total = (name: (typeof SERIES)[number][0]) => counts[name].reduce((a, b) => a + b, 0);
  const summary = SERIES.map(([name]) => `${total(name)} ${name}`).join(', ');
  return html`<figure class="chart"><svg viewBox="0 0 ${WIDTH} ${HEIGHT}" width="100%" height="${HEIGHT}" preserveAspectRatio="none" role="img" aria-label="events per minute, last hour: ${summary}">
<title>Events per minute, last ${minutes} minutes: ${summary} (peak ${peak} a minute)</title>
<line x1="0" y1="${HEIGHT - 4}" x2="${WIDTH}" y2="${HEIGHT - 4}" stroke="#e5e7eb"/>
${SERIES.map(([name, colour]) => html`<polyline data-series="${name}" fill="none" stroke="${colour}" stroke-width="2" vector-effect="non-scaling-stroke" points="${counts[name].map((n, i) => `${x(i)},${y(n)}`).join(' ')}"/>`)}
</svg><figcaption>Last ${minutes} min, per minute (peak ${peak}): ${SERIES.map(([name, colour]) => html`<span style="color:${colour}">■</span> ${name} <b>${total(name)}</b> `)}</figcaption></figure>`;
}
