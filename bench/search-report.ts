import { SEARCH_TARGET_MS, type SearchFigures, type SearchQueryFigures } from './search.js';

/** The indexes the console's list and search added (drizzle/0003_console.sql, and event_search's in 0005); the others were there before. */
const CONSOLE_INDEXES = new Set([
  'webhook_events_source_idx',
  'webhook_events_type_idx',
  'webhook_events_received_brin',
  'event_search_value_idx',
  'event_search_event_brin',
]);

const n = (value: number, digits = 0) =>
  Number.isFinite(value) ? value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : '–';
const mb = (bytes: number) => n(bytes / 2 ** 20, 1);

function row(q: SearchQueryFigures, base: SearchQueryFigures | undefined): string[] {
  const times = q.error ? [`failed: ${q.error}`, '', ''] : [n(q.ms.median, 1), n(q.ms.max, 1), base ? `×${(q.ms.median / base.ms.median).toFixed(1)}` : ''];
  return [q.label, q.filter, n(q.matches), String(q.pageRows), ...times, q.plan];
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

/** The search section of the printed report: each search's first page against the newest page, the target line, and what the indexes cost. */
export function formatSearch(search: SearchFigures): string[] {
  if (!search.available) return ['Search', `not available: ${search.reason}`, ''];
  const { baseline, queries, sizes } = search;
  const targeted = queries.filter((q) => q.targeted);
  const worst = targeted.find((q) => q.error) ?? targeted.reduce<SearchQueryFigures | undefined>((w, q) => (!w || q.ms.max > w.ms.max ? q : w), undefined);
  const met = worst !== undefined && !worst.error && worst.ms.max < SEARCH_TARGET_MS;
  const slowestMedian = Math.max(...targeted.map((q) => q.ms.median));
  const out = [
    `Search (PostgreSQL): listEvents' first page (50 rows) over ${n(search.events)} events (filled in ${n(search.fillMs / 1000, 1)} s, VACUUM ANALYZE ${n(search.vacuumMs / 1000, 1)} s); ` +
      `${search.repeats} runs each after a warm-up, round-robin; ×ratio to the newest page without a filter`,
    table(
      ['search', 'as typed', 'matches', 'page', 'median ms', 'max ms', '×newest page', 'plan (EXPLAIN ANALYZE, actual rows)'],
      [row(baseline, undefined), ...queries.map((q) => row(q, baseline))],
    ),
    `search over ${n(search.events)} events: ${n(slowestMedian, 1)} ms (target < ${n(SEARCH_TARGET_MS)} ms): ${met ? 'met' : 'NOT MET'} ` +
      `(slowest median of (a)–(e); every run of (a)–(e) ≤ ${n(worst?.ms.max ?? NaN, 1)} ms, ${worst?.label ?? '–'}); (f) reads every row's payload: a scan, reported, not held to the target`,
    `webhook_events at ${n(search.events)} rows: heap ${mb(sizes.heapBytes)} MB, TOAST ${mb(sizes.toastBytes)} MB; event_search (search keys) heap ${mb(sizes.searchKeysBytes)} MB; indexes: ` +
      sizes.indexes.map((i) => `${i.name}${CONSOLE_INDEXES.has(i.name) ? ' (console)' : ''} ${mb(i.bytes)} MB`).join(', '),
  ];
  const normal = search.oddPayloads[0];
  out.push(
    `Odd payloads, each stored ${search.repeats} times one at a time beside the rest (×per MiB against the normal event):`,
    table(
      ['payload', 'size KiB', 'ms/event', 'ms/MiB', 'search keys', 'found by its customer id'],
      search.oddPayloads.map((o) => [
        o.kind,
        n(o.bytes / 1024, 1),
        n(o.msPerEvent, 2),
        `${n(o.msPerMiB, 1)}${normal && o !== normal ? ` ×${(o.msPerMiB / normal.msPerMiB).toFixed(2)}` : ''}`,
        String(o.searchKeys),
        o.foundById ? 'yes' : 'NO',
      ]),
    ),
  );
  for (const q of targeted.filter((q) => q.planText)) out.push(`plan of ${q.label} (over target):`, q.planText!);
  return [...out, ''];
}
