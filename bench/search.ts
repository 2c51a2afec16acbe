import { measureOddPayloads, type OddPayloadFigures } from './odd-payloads.js';
import { openDatabase } from '../src/db/client.js';
import type { Database } from '../src/db/database.js';
import { filterConditions, parsePayloadMatch } from '../src/db/event-filter.js';
import { listEvents, type ListEventsQuery } from '../src/db/events.js';
import { fillSearchEvents, receivedAtOf, searchSizes, type SearchFill, type SearchSizes } from './search-fill.js';
import { createDatabase } from './servers.js';
import { spread, type Spread } from './stats.js';

/** The console's promise: a search over a large inbox answers its first page within this. */
export const SEARCH_TARGET_MS = 1000;
const DAY_MS = 86_400_000;

/** One search as a person would type it in the console, and how it went. */
export interface SearchQueryFigures {
  label: string;
  /** The filter as typed (the console's fields). */
  filter: string;
  /** Held to SEARCH_TARGET_MS; the scan over everything is reported, not held. */
  targeted: boolean;
  /** Rows the filter matches in all (a count apart from the timed runs). */
  matches: number;
  /** Rows on the first page (at most 50). */
  pageRows: number;
  ms: Spread;
  /** The plan's nodes, outermost first, from EXPLAIN (ANALYZE) of the statement listEvents sent. */
  plan: string;
  /** The whole EXPLAIN (ANALYZE, BUFFERS) text, kept for queries over target and the scan. */
  planText?: string;
  /** Why it has no timings (e.g. the statement timeout). */
  error?: string;
}

/** The search section: listEvents' first page over a large inbox, per filter, beside the unfiltered newest page. */
export type SearchFigures =
  | { available: false; reason: string }
  | {
      available: true;
      events: number;
      fillMs: number;
      vacuumMs: number;
      repeats: number;
      baseline: SearchQueryFigures;
      queries: SearchQueryFigures[];
      sizes: SearchSizes;
      /** Hostile payload shapes stored beside a normal one: time per event and per MiB, search keys, found by id. */
      oddPayloads: OddPayloadFigures[];
    };

export interface SearchOptions {
  /** Events filled in. */
  events: number;
  /** Timed runs per query, after one warm-up run each. */
  repeats: number;
}

interface SearchCase {
  label: string;
  filter: string;
  query: ListEventsQuery;
  targeted: boolean;
}

/** The searches: the customer's own events, a number, a type and a day, a source and a status, a contains within a day, a contains over everything. */
function searchCases(fill: SearchFill): SearchCase[] {
  const dayAgo = new Date(fill.newestAt - DAY_MS);
  // One email belongs to one event (user<n>@); the day around it, as a person narrowing a contains search would give.
  const target = Math.min(12_345, fill.events);
  const around = receivedAtOf(fill, target).getTime();
  const day = { from: new Date(around - DAY_MS / 2), to: new Date(around + DAY_MS / 2) };
  const iso = (d: Date) => d.toISOString().slice(0, 16);
  return [
    {
      label: '(a) equals, a customer',
      filter: 'where data.object.customer = cus_00000123',
      query: { where: parsePayloadMatch('data.object.customer = cus_00000123') },
      targeted: true,
    },
    {
      label: '(b) equals, a number',
      filter: 'where data.object.amount_paid = 4200',
      query: { where: parsePayloadMatch('data.object.amount_paid = 4200') },
      targeted: true,
    },
    { label: '(c) type, last 24 h', filter: `type invoice.paid, from ${iso(dayAgo)}`, query: { type: 'invoice.paid', from: dayAgo }, targeted: true },
    { label: '(d) source + status', filter: 'source shop, status dead', query: { source: 'shop', status: 'dead' }, targeted: true },
    {
      label: '(e) contains, within 24 h',
      filter: `where data.object.customer_email ~ user${target}@, ${iso(day.from)} to ${iso(day.to)}`,
      query: { where: parsePayloadMatch(`data.object.customer_email ~ user${target}@`), ...day },
      targeted: true,
    },
    {
      label: '(f) contains, everything (a scan)',
      filter: `where data.object.customer_email ~ user${target}@`,
      query: { where: parsePayloadMatch(`data.object.customer_email ~ user${target}@`) },
      targeted: false,
    },
  ];
}

/** A Database that remembers the last statement it ran, to EXPLAIN exactly what listEvents sent. */
function recording(db: Database): { db: Database; last: () => { text: string; params: unknown[] } } {
  let last = { text: '', params: [] as unknown[] };
  const query = async <T>(text: string, params: unknown[] = []): Promise<T[]> => {
    last = { text, params };
    return db.query<T>(text, params);
  };
  return { db: { ...db, query }, last: () => last };
}

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  'Actual Rows'?: number;
  Plans?: PlanNode[];
}

/** `Limit ← Index Scan Backward (webhook_events_pkey, 51 rows)`: each node's type, index and actual rows, outermost first. */
function planChain(node: PlanNode): string {
  const name = `${node['Node Type']}${node['Index Name'] ? ` ${node['Index Name']}` : ''} (${node['Actual Rows'] ?? '?'} rows)`;
  const children = (node.Plans ?? []).map(planChain);
  if (children.length === 0) return name;
  return children.length === 1 ? `${name} ← ${children[0]}` : `${name} ← [${children.join(' + ')}]`;
}

async function explain(db: Database, statement: { text: string; params: unknown[] }): Promise<{ chain: string; text: string }> {
  const [json] = await db.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${statement.text}`, statement.params);
  const text = await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${statement.text}`, statement.params);
  return { chain: planChain(json!['QUERY PLAN'][0]!.Plan), text: text.map((r) => r['QUERY PLAN']).join('\n') };
}

/** How many rows a filter matches in all: the list's own conditions (event-filter.ts), counted. */
async function countMatches(rec: ReturnType<typeof recording>, query: ListEventsQuery): Promise<number> {
  const params: unknown[] = [];
  const conditions = filterConditions(query, (value) => `$${params.push(value)}`);
  const where = conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';
  const [row] = await rec.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM hookrun.webhook_events e ${where}`, params);
  return row!.n;
}

/** Time every case round-robin (one warm-up each first, so no case always runs on a cold cache), then EXPLAIN each. */
async function measureCases(db: Database, cases: SearchCase[], repeats: number, progress: (line: string) => void): Promise<SearchQueryFigures[]> {
  const rec = recording(db);
  const runs = cases.map(() => [] as number[]);
  const pageRows = cases.map(() => 0);
  const errors: Array<string | undefined> = cases.map(() => undefined);
  for (let round = 0; round <= repeats; round++) {
    for (const [i, c] of cases.entries()) {
      if (errors[i]) continue;
      const started = performance.now();
      try {
        pageRows[i] = (await listEvents(rec.db, c.query)).events.length;
      } catch (error) {
        errors[i] = (error as Error).message;
        continue;
      }
      if (round > 0) runs[i]!.push(performance.now() - started);
    }
  }
  const figures: SearchQueryFigures[] = [];
  for (const [i, c] of cases.entries()) {
    await listEvents(rec.db, c.query).catch(() => undefined);
    const plan = await explain(db, rec.last()).catch((error: Error) => ({ chain: `EXPLAIN failed: ${error.message}`, text: '' }));
    const matches = await countMatches(rec, c.query).catch(() => NaN);
    const ms = spread(runs[i]!);
    const slow = !c.targeted || errors[i] !== undefined || ms.max >= SEARCH_TARGET_MS;
    figures.push({ ...c, matches, pageRows: pageRows[i]!, ms, plan: plan.chain, planText: slow ? plan.text : undefined, error: errors[i] });
    progress(`search: ${c.label}: ${ms.median.toFixed(1)} ms median, ${ms.max.toFixed(1)} max, ${matches} matches; ${plan.chain}`);
  }
  return figures;
}

/**
 * Is a search over a large inbox quick? PostgreSQL only, on a database of its
 * own: webhook_events filled with `events` Stripe-like events in SQL
 * (bench/search-fill.ts), VACUUM ANALYZEd, then each search's first page (50
 * rows) through the real listEvents, beside the unfiltered newest page.
 */
export async function runSearch(databaseUrl: string | undefined, options: SearchOptions, progress: (line: string) => void): Promise<SearchFigures> {
  if (!databaseUrl) return { available: false, reason: 'no BENCH_DATABASE_URL / TEST_DATABASE_URL (the search section runs on PostgreSQL only)' };
  const database = await createDatabase(databaseUrl, 'search');
  const opened: Database[] = [];
  try {
    // The fill and VACUUM run past hookrun's 10 s statement timeout; the searches run with hookrun's own settings.
    const admin = await openDatabase({ databaseUrl: database.url, queryTimeoutMs: 3_600_000, poolSize: 1 });
    opened.push(admin);
    await admin.migrate();
    const fill: SearchFill = { newestAt: Date.now(), events: options.events };
    const filled = await fillSearchEvents(admin, fill, progress);
    progress(
      `search: ${options.events.toLocaleString('en-US')} events in ${(filled.insertMs / 1000).toFixed(1)} s, VACUUM ANALYZE ${(filled.vacuumMs / 1000).toFixed(1)} s`,
    );
    const sizes = await searchSizes(admin);
    const db = await openDatabase({ databaseUrl: database.url, poolSize: 1 });
    opened.push(db);
    const baselineCase: SearchCase = { label: 'newest page, no filter (baseline)', filter: '(none)', query: {}, targeted: false };
    const [baseline, ...queries] = await measureCases(db, [baselineCase, ...searchCases(fill)], options.repeats, progress);
    const oddPayloads = await measureOddPayloads(db, options.repeats);
    progress(`search: odd payloads stored (${oddPayloads.map((o) => `${o.kind} ${o.msPerEvent.toFixed(1)} ms`).join(', ')})`);
    return {
      available: true,
      events: options.events,
      fillMs: filled.insertMs,
      vacuumMs: filled.vacuumMs,
      repeats: options.repeats,
      baseline: baseline!,
      queries,
      sizes,
      oddPayloads,
    };
  } finally {
    for (const db of opened) await db.close();
    await database.drop();
  }
}
