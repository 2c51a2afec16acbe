import type { AuthDrainFigures } from './auth-drain.js';
import type { CronFigures } from './cron.js';
import type { FlowDrainFigures } from './flow-drain.js';
import type { FlowFigures } from './flow.js';
import type { IngestFigures } from './ingest.js';
import type { LeverFigures } from './levers.js';
import { NEXT_HOOKRUN_TARGET, NEXT_VERIFY_TARGET, type NextFirstRequest } from './next-target.js';
import type { ProcessingFigures } from './processing.js';
import type { ScaleFigures } from './scale.js';
import type { SearchFigures } from './search.js';
import { formatSearch } from './search-report.js';
import type { Spread } from './stats.js';
import type { StartupFigures } from './startup.js';
import type { StorageFigures } from './storage.js';

/** Everything one run measured; written as JSON to bench/results/. */
export interface BenchReport {
  startedAt: string;
  mode: 'full' | 'smoke';
  machine: { cpu: string; cores: number; memoryGb: number; node: string; commit: string; dirty: boolean };
  settings: { rounds: number; seconds: number; connections: number; database: string | undefined };
  startup?: StartupFigures;
  /** The same for the `--baseline` build, when one was given. */
  startupBaseline?: StartupFigures;
  ingest?: IngestFigures[];
  /** The first request to each route of a fresh `next start` (the Next.js targets of the ingest section). */
  nextFirstRequest?: NextFirstRequest;
  processing?: { embedded: ProcessingFigures; postgres: ProcessingFigures };
  cron?: CronFigures;
  storage?: StorageFigures[];
  /** The PostgreSQL levers, each alone against the shipped schema. */
  levers?: LeverFigures[];
  /** A Clerk backlog drained by `hookrun start`, per build (`--baseline`) and storage kind. */
  authDrain?: AuthDrainFigures[];
  scale?: ScaleFigures;
  /** Flow control: claims beside a blocked backlog, and a rate limit held (PostgreSQL). */
  flow?: FlowFigures;
  /** Searches over a large inbox through listEvents, and what the console's indexes cost (PostgreSQL). */
  search?: SearchFigures;
}

const NA = 'not available';

function num(value: number, digits = 0): string {
  if (!Number.isFinite(value)) return '–';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function range(s: Spread | undefined, digits = 0): string {
  if (!s) return NA;
  return s.values.length > 1 ? `${num(s.median, digits)} (${num(s.min, digits)}–${num(s.max, digits)})` : num(s.median, digits);
}

function ratio(value: number, base: number | undefined): string {
  return base && Number.isFinite(value) && base > 0 ? ` ×${(value / base).toFixed(2)}` : '';
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

function ingestTable(ingest: IngestFigures[]): string {
  // Ratios are to the verify-only ceiling (what every verifying receiver must do), else to hello-world.
  const base = ingest.find((f) => f.name === 'verify-only') ?? ingest.find((f) => f.name === 'hello-world');
  const cell = (f: IngestFigures, pick: (f: IngestFigures) => Spread, digits: number) =>
    `${range(pick(f), digits)}${f === base || f.name === 'hello-world' ? '' : ratio(pick(f).median, base && pick(base).median)}`;
  const rows: Array<[string, string, (f: IngestFigures) => string]> = [
    ['ingest req/s (2xx)', '≥ 0.35 PG / 0.20 embedded × verify-only', (f) => cell(f, (x) => x.reqPerSec, 0)],
    ['latency p50 ms', '', (f) => cell(f, (x) => x.p50Ms, 1)],
    ['latency p99 ms', '≤ 25 PG / ≤ 40 embedded', (f) => cell(f, (x) => x.p99Ms, 1)],
    ['non-2xx / errors', '0', (f) => `${f.non2xx} / ${f.errors}${f.reused ? ` (${f.reused} reused events)` : ''}`],
    ['server CPU ms/request (the round)', '', (f) => cell(f, (x) => x.cpuMsPerRequest, 3)],
    [
      'server CPU ms/event, processed',
      '≤ 0.15 PG / ≤ 0.40 embedded',
      (f) => (f.cpuMsPerProcessed ? `${range(f.cpuMsPerProcessed, 3)}${ratio(f.cpuMsPerProcessed.median, base?.cpuMsPerRequest.median)}` : '–'),
    ],
    [
      'PostgreSQL CPU ms/event, processed',
      '',
      (f) => (f.dbCpuMsPerProcessed ? range(f.dbCpuMsPerProcessed, 3) : f.dbCpuMsPerRequest ? `${range(f.dbCpuMsPerRequest, 3)} (the round)` : '–'),
    ],
    ['worker done after the round, ms', '', (f) => (f.drainAfterMs ? range(f.drainAfterMs) : '–')],
    ['peak RSS MB', '≤ 400 embedded / ≤ 120 PG', (f) => num(f.peakRssMb)],
  ];
  return table(
    ['figure', 'target', ...ingest.map((f) => f.name)],
    rows.map(([name, target, get]) => [name, target, ...ingest.map(get)]),
  );
}

/** Inside Next.js: the mounted receiver over the same app's verify-only route, round by round's medians, and each route's first request. */
function nextTargetsLine(ingest: IngestFigures[], first: NextFirstRequest | undefined): string | undefined {
  const mounted = ingest.find((f) => f.name === NEXT_HOOKRUN_TARGET);
  const verify = ingest.find((f) => f.name === NEXT_VERIFY_TARGET);
  if (!mounted || !verify) return undefined;
  const times = (a: number, b: number) => `×${(a / b).toFixed(2)}`;
  return [
    `Inside Next.js, the mounted receiver (storing durably) over the app's verify-only route: req/s ${times(mounted.reqPerSec.median, verify.reqPerSec.median)} (target ≥ ×0.80),`,
    ` p99 ${times(mounted.p99Ms.median, verify.p99Ms.median)} (target ≤ ×1.30)`,
    first ? `; first request of a fresh next start: hookrun ${num(first.hookrunMs)} ms, verify-only route ${num(first.verifyMs)} ms` : '',
  ].join('');
}

function authDrainTable(figures: AuthDrainFigures[]): string {
  // Ratios are to the first baseline build of the same storage kind, when one ran.
  const base = (f: AuthDrainFigures) => figures.find((b) => b.storage === f.storage && b.build.startsWith('baseline'));
  const cell = (f: AuthDrainFigures, pick: (f: AuthDrainFigures) => Spread | undefined) => {
    const value = pick(f);
    const b = base(f);
    return value ? `${range(value)}${b && b !== f ? ratio(value.median, pick(b)?.median) : ''}` : '–';
  };
  return [
    `Clerk backlog drain (auth route, ${num(figures[0]?.backlog ?? 0)} events; CPU per event from /ready; embedded: the database runs inside hookrun)`,
    table(
      ['build', 'storage', 'drain events/s', 'hookrun µs/event', 'PostgreSQL µs/event', 'mirrors as first build'],
      figures.map((f) => [
        f.build,
        f.storage,
        cell(f, (x) => x.drainPerSecond),
        cell(f, (x) => x.hookrunUs),
        cell(f, (x) => x.databaseUs),
        f.mirrorsAsFirstBuild ? 'yes' : 'NO',
      ]),
    ),
    ...figures
      .filter((f) => f.over)
      .map(
        (f) =>
          `${f.storage}: "${f.build}" over "${f.over!.baseline}" (same backlog, round by round): drain events/s ×${f.over!.drainPerSecond.median.toFixed(2)}, ` +
          `hookrun µs/event ×${f.over!.hookrunUs.median.toFixed(2)}${f.over!.databaseUs ? `, PostgreSQL µs/event ×${f.over!.databaseUs.median.toFixed(2)}` : ''}`,
      ),
  ].join('\n');
}

function processingCell(p: ProcessingFigures | undefined, pick: (p: Extract<ProcessingFigures, { available: true }>) => string): string {
  if (!p) return 'skipped';
  return p.available ? pick(p) : `${NA}: ${p.reason}`;
}

function leversTable(levers: LeverFigures[]): string {
  const base = levers.find((l) => l.variant === 'shipped');
  const cell = (l: LeverFigures, pick: (l: LeverFigures) => Spread, digits = 0) =>
    `${range(pick(l), digits)}${l === base ? '' : ratio(pick(l).median, base && pick(base).median)}`;
  return [
    'PostgreSQL levers (each alone; per event; ×ratio to shipped; PG = its backends for this database)',
    table(
      ['variant', 'ingest /s', 'PG µs ingest', 'hookrun µs ingest', 'drain /s', 'PG µs drain', 'hookrun µs drain', 'MB/M after drain'],
      levers.map((l) => [
        l.variant,
        cell(l, (x) => x.ingestPerSecond),
        cell(l, (x) => x.serverIngestUs),
        cell(l, (x) => x.clientIngestUs),
        cell(l, (x) => x.drainPerSecond),
        cell(l, (x) => x.serverDrainUs),
        cell(l, (x) => x.clientDrainUs),
        num(l.tableMbPerMillion),
      ]),
    ),
    ...levers.map((l) => `  ${l.variant}: ${l.what}`),
  ].join('\n');
}

function scaleSection(scale: ScaleFigures): string[] {
  if (!scale.available) return ['Scale', `${NA}: ${scale.reason}`, ''];
  const vs = (value: number, base: Spread | undefined) => (base ? ` ×${(value / base.median).toFixed(2)} of ${num(base.median)}` : '');
  const rows = scale.steps.map((s) => [
    s.size === 0 ? 'empty' : num(s.size),
    num(s.rows),
    `${range(s.ingest.reqPerSec)}${vs(s.ingest.reqPerSec.median, s.ingestEmpty?.reqPerSec)}`,
    `${range(s.ingest.p99Ms, 1)}${s.ingestEmpty ? ` (empty ${num(s.ingestEmpty.p99Ms.median, 1)})` : ''}`,
    `${range(s.ingest.cpuMsPerRequest, 3)} + ${s.ingest.dbCpuMsPerRequest ? range(s.ingest.dbCpuMsPerRequest, 3) : '–'}${s.ingestEmpty?.dbCpuMsPerRequest ? ` (empty ${num(s.ingestEmpty.cpuMsPerRequest.median, 3)} + ${num(s.ingestEmpty.dbCpuMsPerRequest.median, 3)})` : ''}`,
    `${s.ingest.non2xx} / ${s.ingest.errors}`,
    `${range(s.drainPerSec)}${vs(s.drainPerSec.median, s.drainEmptyPerSec)}`,
    Object.entries(s.drainCpu ?? {})
      .reverse()
      .map(([name, c]) => `${num(c.hookrun.median, 3)} + ${num(c.db.median, 3)}${name === 'empty' && s.size > 0 ? ' (empty)' : ''}`)
      .join(' / '),
    `${num(s.eventsMb)} + ${num(s.deliveriesMb)}`,
    s.size === 0 ? '' : `${num(s.fillMs / 1000, 1)} + ${num(s.vacuumMs / 1000, 1)}`,
    s.statusCountsMs ? `${num(s.statusCountsMs.fresh, 1)} / ${num(s.statusCountsMs.next, 1)}` : '–',
  ]);
  const out = [
    `Scale (PostgreSQL; each size against an empty inbox in the same rotation; drain backlog ${num(scale.backlog)})`,
    table(
      [
        'inbox size',
        'rows',
        'ingest req/s (×empty, same run)',
        'p99 ms',
        'CPU ms/request: hookrun + PostgreSQL',
        'non-2xx / errors',
        'drain events/s (×empty)',
        'drain CPU ms/event: hookrun + PostgreSQL',
        'table+index MB (events + deliveries and attempts)',
        'fill s + VACUUM ANALYZE s',
        'status counts ms (fresh / next)',
      ],
      rows,
    ),
  ];
  const r = scale.retention;
  if (r) {
    const mb = (bytes: number) => num(bytes / 2 ** 20);
    out.push(
      `Retention at ${num(r.rowsBefore)} rows (${num(r.pastRetention)} = the older ${Math.round(scale.retentionFraction * 100)} % past EVENT_RETENTION_DAYS=30): ` +
        `one pass deleted ${num(r.firstPass.deleted)} in ${num(r.firstPass.ms)} ms, longest statement ${num(r.firstPass.longestStatementMs, 1)} ms (${r.firstPass.statements} statements); ` +
        `${r.allPasses.passes} passes deleted ${num(r.allPasses.deleted)} in ${num(r.allPasses.ms)} ms, longest statement ${num(r.allPasses.longestStatementMs, 1)} ms; ` +
        `webhook_events ${mb(r.eventsBytesBefore)} → ${mb(r.eventsBytesAfter)} MB after VACUUM, handler_deliveries + event_attempts ${mb(r.deliveriesBytesBefore)} → ${mb(r.deliveriesBytesAfter)} MB, webhook_event_keys ${mb(r.keysBytesAfter)} MB`,
    );
  }
  return [...out, ''];
}

function flowSection(flow: FlowFigures): string[] {
  if (!flow.available) return ['Flow control', `${NA}: ${flow.reason}`, ''];
  const { empty, withBacklog: full, backlog, rate } = flow;
  const row = (name: string, f: FlowDrainFigures, base?: FlowDrainFigures) => [
    name,
    `${range(f.perSecond)}${base ? ratio(f.perSecond.median, base.perSecond.median) : ''}`,
    `${range(f.hookrunUs)} + ${range(f.postgresUs)}${base ? ` ×${(f.hookrunUs.median / base.hookrunUs.median).toFixed(2)} + ×${(f.postgresUs.median / base.postgresUs.median).toFixed(2)}` : ''}`,
    `${num(f.claimP50Ms, 2)} / ${num(f.claimP99Ms, 2)}${base ? ` ×${(f.claimP50Ms / base.claimP50Ms).toFixed(2)} / ×${(f.claimP99Ms / base.claimP99Ms).toFixed(2)}` : ''} (${num(f.claims)})`,
    f.flowClaims > 0 ? `${num(f.flowClaimP50Ms, 2)} / ${num(f.flowClaimP99Ms, 2)} (${num(f.flowClaims)})` : '–',
  ];
  return [
    `Flow control (PostgreSQL): ${num(flow.events)} events of a handler without flow options drained by the worker loop, on an empty inbox and beside ` +
      `${num(backlog.deliveries)} pending deliveries over ${num(backlog.keys)} keys of two blocked handlers (filled in ${num(backlog.fillMs / 1000, 1)} s)`,
    table(
      [
        'inbox',
        'drain events/s (×empty)',
        'CPU µs/event: hookrun + PostgreSQL',
        'inbox claim transaction p50 / p99 ms (claims)',
        'flow claim transaction p50 / p99 ms (claims)',
      ],
      [row('empty', empty), row(`+ ${num(backlog.deliveries)} blocked deliveries`, full, empty)],
    ),
    `drain with the backlog, each round over the empty drain before it: ×${range(flow.pairRatio, 2)} (target within 10 %: ≥ ×0.90); blocked deliveries started: ${flow.blockedStarted} (must be 0)`,
    `rateLimit ${rate.limit}/s for ${rate.seconds} s: ${num(rate.starts)} starts, ${num(rate.perSecond, 2)}/s, ${rate.deviation >= 0 ? '+' : ''}${(rate.deviation * 100).toFixed(1)} % (target ± 5 %); ` +
      `most in any 1 s: ${rate.maxPerSecondByHandler} by handler start, ${rate.maxPerSecondBySlot} by granted slot (${num(rate.slots)} slots); ` +
      `events started again: ${rate.repeated}; worker errors: ${rate.workerErrors}${rate.firstError ? ` (first: ${rate.firstError})` : ''}`,
    `A keyed handler (rateLimit per key, every event a new key) drained on a fresh database and after ${num(flow.keysGone.keys)} distinct keys came and went ` +
      `(their idle rows written in ${num(flow.keysGone.fillMs / 1000, 1)} s, swept by the engine beside the first drain)`,
    table(
      [
        'database',
        'drain events/s (×fresh)',
        'CPU µs/event: hookrun + PostgreSQL',
        'inbox claim transaction p50 / p99 ms (claims)',
        'flow claim transaction p50 / p99 ms (claims)',
      ],
      [row('fresh', flow.keysGone.empty), row(`after ${num(flow.keysGone.keys)} keys`, flow.keysGone.afterKeys, flow.keysGone.empty)],
    ),
    `drain after the keys, each round over the fresh drain before it: ×${range(flow.keysGone.pairRatio, 2)} (target within 10 %: ≥ ×0.90); rows of the gone keys left: ${num(flow.keysGone.rowsLeft)} (must be 0)`,
    '',
  ];
}

/** The human table printed at the end of a run (medians, min–max, ratio to hello-world of the same run). */
export function formatReport(report: BenchReport): string {
  const out: string[] = [];
  const m = report.machine;
  out.push(`\nhookrun bench, ${report.mode}, ${report.startedAt}, commit ${m.commit}${m.dirty ? ' (src modified)' : ''}`);
  out.push(
    `machine: ${m.cores} × ${m.cpu}, ${m.memoryGb} GB, Node ${m.node}; ${report.settings.rounds} rounds × ${report.settings.seconds} s, ${report.settings.connections} connections\n`,
  );
  if (report.ingest) {
    out.push('Ingest (median (min–max) ×ratio to verify-only: node:http + stripe-node verification, no storage)', ingestTable(report.ingest), '');
    const inside = nextTargetsLine(report.ingest, report.nextFirstRequest);
    if (inside) out.push(inside, '');
  }
  if (report.startup) {
    const columns: Array<[string, StartupFigures]> = [['hookrun', report.startup]];
    if (report.startupBaseline) columns.push(['baseline', report.startupBaseline]);
    const row = (name: string, target: string, pick: (s: StartupFigures) => Spread | undefined): string[] => [
      name,
      target,
      ...columns.map(([, s]) => range(pick(s))),
    ];
    out.push(
      'Start-up: spawn → /ready 200, ms, median (min–max)',
      table(
        ['situation', 'target', ...columns.map(([name]) => name)],
        [
          row('embedded, fresh data dir', '', (s) => s.freshDataDirMs),
          row('embedded, existing data dir', '≤ 1,000', (s) => s.existingDataDirMs),
          row('PostgreSQL, fresh database', '', (s) => s.postgresFreshMs),
          row('PostgreSQL, migrated database', '≤ 500', (s) => s.postgresMs),
        ],
      ),
      '',
    );
  }
  if (report.processing) {
    const { embedded, postgres } = report.processing;
    out.push(
      'Processing',
      table(
        ['figure', 'target', 'embedded', 'postgres'],
        [
          [
            'backlog drain events/s',
            '≥ 3,000 (PG)',
            processingCell(embedded, (p) => `${num(p.drainedPerSec)} (${p.drained}/${p.backlog})`),
            processingCell(postgres, (p) => `${num(p.drainedPerSec)} (${p.drained}/${p.backlog})`),
          ],
          [
            'received → processed p50 / p99 ms',
            '≤ 10 p50',
            processingCell(embedded, (p) => `${num(p.latencyP50Ms, 1)} / ${num(p.latencyP99Ms, 1)}`),
            processingCell(postgres, (p) => `${num(p.latencyP50Ms, 1)} / ${num(p.latencyP99Ms, 1)}`),
          ],
        ],
      ),
      '',
    );
  }
  if (report.storage && report.storage.length > 0) {
    out.push(
      `Storage (${num(report.storage[0]!.events)} bench Stripe events)`,
      table(
        ['figure', ...report.storage.map((s) => s.storage)],
        [
          ['inbox MB per million events, as stored', ...report.storage.map((s) => num(s.inboxMbPerMillion))],
          ['the same processed and vacuumed (free space reused)', ...report.storage.map((s) => num(s.processedMbPerMillion))],
          ['beside it, processed: deliveries, search keys, requests MB per million', ...report.storage.map((s) => num(s.besideMbPerMillion))],
          ['dedupe keys MB per million deleted events', ...report.storage.map((s) => num(s.keysMbPerMillion))],
          ['retention pass ms (all of them)', ...report.storage.map((s) => num(s.pruneMs))],
          ['longest retention statement ms', ...report.storage.map((s) => num(s.longestStatementMs, 1))],
        ],
      ),
      '',
    );
  }
  if (report.authDrain) out.push(authDrainTable(report.authDrain), '');
  if (report.levers) out.push(leversTable(report.levers), '');
  if (report.scale) out.push(...scaleSection(report.scale));
  if (report.flow) out.push(...flowSection(report.flow));
  if (report.search) out.push(...formatSearch(report.search));
  if (report.cron) {
    const c = report.cron;
    const value = c.available
      ? `${num(c.lagP50Ms, 1)} / ${num(c.lagP99Ms, 1)} (max ${num(c.lagMaxMs, 1)}; ${c.ticks} ticks, ${c.skipped} skipped; ${c.storage})`
      : `${NA}: ${c.reason}`;
    out.push('Cron (keep-alive every second)', table(['figure', 'target', 'value'], [['start lag p50 / p99 ms', '≤ 1,000 p99', value]]), '');
  }
  return `${out.join('\n')}\n`;
}
