import { CHART_RANGES, type ChartRange, type EventHistogram } from '../../db/event-histogram.js';
import { EVENT_STATUSES } from '../../db/events.js';
import { html, type SafeHtml } from '../html.js';

/** Each status's colour in the chart and its legend. */
const COLOURS: Record<(typeof EVENT_STATUSES)[number], string> = {
  pending: '#f59e0b',
  processed: '#10b981',
  ignored: '#94a3b8',
  failed: '#f97316',
  dead: '#dc2626',
};
const WIDTH = 600;
const HEIGHT = 120;
/** Time labels under the chart: the start, three between, and the end. */
const TICKS = 5;

const clock = (ms: number, withDay: boolean) => {
  const iso = new Date(ms).toISOString();
  return withDay ? `${iso.slice(5, 10)} ${iso.slice(11, 16)}` : iso.slice(11, 16);
};

/** The range links above the chart (1 h, 24 h, 7 d); the current one marked. */
function rangeLinks(current: ChartRange): SafeHtml {
  return html`<p class="ranges" id="chart-ranges">Range: ${Object.keys(CHART_RANGES).map(
    (r, i) =>
      html`${i ? ' · ' : ''}${r === current ? html`<b aria-current="true" data-range="${r}">${r}</b>` : html`<a href="/admin?range=${r}" data-range="${r}">${r}</a>`}`,
  )}</p>`;
}

/**
 * The events received over a range as one inline SVG of stacked bars (no
 * script, no library), a bar per bucket split by status, with the y axis's
 * maximum, a time axis (UTC) and a legend naming every status drawn with its
 * total over the range.
 */
export function eventChart(histogram: EventHistogram): SafeHtml {
  const { series, bucketMs, from } = histogram;
  const buckets = series.pending.length;
  const perBucket = Array.from({ length: buckets }, (_, i) => EVENT_STATUSES.reduce((sum, s) => sum + series[s][i]!, 0));
  const peak = Math.max(1, ...perBucket);
  const totals = Object.fromEntries(EVENT_STATUSES.map((s) => [s, series[s].reduce((a, b) => a + b, 0)])) as Record<string, number>;
  const received = perBucket.reduce((a, b) => a + b, 0);
  const barWidth = WIDTH / buckets;
  const bars = perBucket.map((_, i) => {
    let top = HEIGHT;
    return EVENT_STATUSES.filter((s) => series[s][i]! > 0).map((s) => {
      const h = (series[s][i]! / peak) * (HEIGHT - 2);
      top -= h;
      return html`<rect x="${(i * barWidth).toFixed(2)}" y="${top.toFixed(2)}" width="${Math.max(barWidth - 0.5, 0.5).toFixed(2)}" height="${h.toFixed(2)}" fill="${COLOURS[s]}"/>`;
    });
  });
  const span = buckets * bucketMs;
  const withDay = span > 86_400_000 / 2;
  const labels = Array.from({ length: TICKS }, (_, i) => from + Math.round((i / (TICKS - 1)) * span));
  const unit = CHART_RANGES[histogram.range].label;
  const summary = EVENT_STATUSES.map((s) => `${totals[s]} ${s}`).join(', ');
  return html`${rangeLinks(histogram.range)}<figure class="chart" id="chart" data-range="${histogram.range}">
<div class="axis-y">max <b id="chart-max">${peak}</b> per bucket</div>
<svg viewBox="0 0 ${WIDTH} ${HEIGHT}" width="100%" height="${HEIGHT}" preserveAspectRatio="none" role="img" aria-label="events received, ${unit}: ${summary}">
<title>Events received, ${unit}: ${summary} (at most ${peak} in one bucket)</title>
<line x1="0" y1="${HEIGHT - 0.5}" x2="${WIDTH}" y2="${HEIGHT - 0.5}" stroke="#e5e7eb"/>${bars}</svg>
<div class="axis-x">${labels.map((ms) => html`<span>${clock(ms, withDay)}</span>`)}</div>
<figcaption>Received, ${unit} (UTC), by status now: <b id="chart-received">${received}</b> in all ·
${EVENT_STATUSES.map((s) => html`<span class="series" data-series="${s}"><span style="color:${COLOURS[s]}">■</span> ${s} <b>${totals[s]}</b></span> `)}</figcaption></figure>`;
}

/** The chart's own styles (axis rows), scoped to the figure. */
export const CHART_STYLE = html`<style>
figure.chart .axis-y{font-size:12px;color:#6b7280}figure.chart .axis-x{display:flex;justify-content:space-between;font-size:11px;color:#6b7280}
figure.chart .series{white-space:nowrap}p.ranges b{padding:0 4px;border:1px solid #111827;border-radius:4px}
</style>`;
