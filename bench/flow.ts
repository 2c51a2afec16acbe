import { openDatabase } from '../src/db/client.js';
import type { Database } from '../src/db/database.js';
import { HandlerRegistry } from '../src/deliveries/registry.js';
import { blockedHandlers, blockedStarts, fillBlockedBacklog, FLOW_SOURCE } from './flow-fill.js';
import { measureRate, type FlowRateFigures } from './flow-rate.js';
import { benchWorker, storeEvents, timedClaims } from './flow-worker.js';
import { backendCpu, backendCpuSpent, createDatabase } from './servers.js';
import { percentile, spread, type Spread } from './stats.js';

/** One inbox's drains: events/s per round, and every claim of every round timed. */
export interface FlowDrainFigures {
  perSecond: Spread;
  /** CPU per drained event, µs: this process (writer excluded: worker, handlers, driver) and the database's PostgreSQL backends. */
  hookrunUs: Spread;
  postgresUs: Spread;
  /** The inbox claim transaction (new events into deliveries, due ones claimed), ms (all rounds together). */
  claimP50Ms: number;
  claimP99Ms: number;
  claims: number;
  /** Flow claim transactions of the blocked handlers, ms (all rounds together; none without them). */
  flowClaimP50Ms: number;
  flowClaimP99Ms: number;
  flowClaims: number;
}

/** Flow control's figures, or why they could not be measured. */
export type FlowFigures =
  | { available: false; reason: string }
  | {
      available: true;
      /** Events per drain, and the blocked backlog beside the second inbox. */
      events: number;
      backlog: { deliveries: number; keys: number; fillMs: number };
      empty: FlowDrainFigures;
      withBacklog: FlowDrainFigures;
      /** Each round's backlog drain rate over the empty one's just before it (pairs run back to back: less noise than the medians). */
      pairRatio: Spread;
      /** Deliveries of the blocked handlers started during the drains: 0 when their limits held. */
      blockedStarted: number;
      rate: FlowRateFigures;
    };

export interface FlowSizes {
  events: number;
  deliveries: number;
  keys: number;
  rounds: number;
  rate: { limit: number; seconds: number };
}

const UNLIMITED = 'bench-unlimited';
const DRAIN_DEADLINE_MS = 600_000;

interface Inbox {
  label: string;
  db: Database;
  handlers: HandlerRegistry;
  perSecond: number[];
  hookrunUs: number[];
  postgresUs: number[];
  claims: number[];
  flowClaims: number[];
}

/**
 * Whether the drain has work left: a stored event not yet turned into
 * deliveries, or a delivery of the unlimited handler not finished. The
 * blocked handlers' events stay `pending` (their deliveries never start), so
 * events' statuses cannot tell.
 */
async function unfinished(db: Database): Promise<boolean> {
  const [row] = await db.query<{ left: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM hookrun.new_events)
         OR EXISTS (SELECT 1 FROM hookrun.handler_deliveries WHERE handler = $1 AND status IN ('pending', 'failed', 'running')) AS left`,
    [UNLIMITED],
  );
  return row!.left;
}

/** Store `events` events for the unlimited handler, start the worker loop, and time it until none is left unfinished. */
async function drain(inbox: Inbox, events: number, round: string, record: boolean): Promise<number> {
  await storeEvents(inbox.db, 'item.created', `${inbox.label}-${round}`, events);
  const claims: number[] = [];
  const flowClaims: number[] = [];
  const worker = benchWorker(timedClaims(inbox.db, claims, flowClaims), inbox.handlers);
  const server = await backendCpu(inbox.db);
  const client = process.cpuUsage();
  const started = performance.now();
  worker.start();
  try {
    for (;;) {
      if (!(await unfinished(inbox.db))) break;
      if (performance.now() - started > DRAIN_DEADLINE_MS) throw new Error(`flow: ${inbox.label} drain not done after ${DRAIN_DEADLINE_MS} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    await worker.stop();
  }
  const perSecond = (events * 1000) / (performance.now() - started);
  const cpu = process.cpuUsage(client);
  const serverMs = backendCpuSpent(server, await backendCpu(inbox.db));
  if (record) {
    inbox.perSecond.push(perSecond);
    inbox.hookrunUs.push((cpu.user + cpu.system) / events);
    inbox.postgresUs.push((serverMs * 1000) / events);
    inbox.claims.push(...claims);
    inbox.flowClaims.push(...flowClaims);
  }
  return perSecond;
}

function figures(inbox: Inbox): FlowDrainFigures {
  return {
    perSecond: spread(inbox.perSecond),
    hookrunUs: spread(inbox.hookrunUs),
    postgresUs: spread(inbox.postgresUs),
    claimP50Ms: percentile(inbox.claims, 50),
    claimP99Ms: percentile(inbox.claims, 99),
    claims: inbox.claims.length,
    flowClaimP50Ms: percentile(inbox.flowClaims, 50),
    flowClaimP99Ms: percentile(inbox.flowClaims, 99),
    flowClaims: inbox.flowClaims.length,
  };
}

async function processedOk(db: Database, expected: number): Promise<void> {
  const [row] = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM hookrun.webhook_events WHERE source = $1 AND type = 'item.created' AND status = 'processed'`,
    [FLOW_SOURCE],
  );
  if (Number(row!.n) !== expected) throw new Error(`flow: ${row!.n} of ${expected} drained events processed`);
}

/**
 * Flow control on PostgreSQL. (1) The cost of a big waiting backlog to
 * everything else: the same drain (events of a handler without flow
 * options) on an empty inbox and beside `deliveries` pending deliveries of
 * two handlers no claim can start, registered in the worker as in
 * production; turn about, after a warm-up drain of each. (2) A handler
 * limited to `rate.limit`/s, run for `rate.seconds`.
 */
export async function runFlow(baseUrl: string | undefined, sizes: FlowSizes, progress: (line: string) => void): Promise<FlowFigures> {
  if (!baseUrl) return { available: false, reason: 'PostgreSQL only: set BENCH_DATABASE_URL' };
  const created = [await createDatabase(baseUrl, 'flowempty'), await createDatabase(baseUrl, 'flowbacklog')];
  const opened: Database[] = [];
  try {
    for (const database of created) opened.push(await openDatabase({ databaseUrl: database.url }));
    for (const db of opened) await db.migrate();
    const unlimited = () => new HandlerRegistry().on(FLOW_SOURCE, 'item.created', async () => undefined, { name: UNLIMITED, isolated: true });
    const inboxes: Inbox[] = [
      { label: 'empty', db: opened[0]!, handlers: unlimited(), perSecond: [], hookrunUs: [], postgresUs: [], claims: [], flowClaims: [] },
      { label: 'backlog', db: opened[1]!, handlers: blockedHandlers(unlimited()), perSecond: [], hookrunUs: [], postgresUs: [], claims: [], flowClaims: [] },
    ];
    // The fill's statements (VACUUM ANALYZE of a million rows) outlast the production statement_timeout; the worker keeps it.
    const filler = await openDatabase({ databaseUrl: created[1]!.url, poolSize: 1, queryTimeoutMs: 1_800_000 });
    const fillMs = await fillBlockedBacklog(filler, sizes, progress).finally(() => filler.close());
    progress(`flow: backlog of ${sizes.deliveries.toLocaleString('en-US')} deliveries over ${sizes.keys} keys in ${(fillMs / 1000).toFixed(1)} s`);
    const warmUp = Math.max(200, Math.floor(sizes.events / 10));
    for (const inbox of inboxes) await drain(inbox, warmUp, 'warm', false);
    for (let round = 1; round <= sizes.rounds; round++) {
      for (const inbox of inboxes) {
        const perSecond = await drain(inbox, sizes.events, `r${round}`, true);
        progress(`flow round ${round}/${sizes.rounds} ${inbox.label}: ${sizes.events} events drained, ${perSecond.toFixed(0)}/s`);
      }
    }
    for (const inbox of inboxes) await processedOk(inbox.db, warmUp + sizes.events * sizes.rounds);
    const blockedStarted = await blockedStarts(opened[1]!, sizes.keys);
    const rate = await measureRate(baseUrl, sizes.rate, progress);
    return {
      available: true,
      events: sizes.events,
      backlog: { deliveries: sizes.deliveries, keys: sizes.keys, fillMs },
      empty: figures(inboxes[0]!),
      withBacklog: figures(inboxes[1]!),
      pairRatio: spread(inboxes[1]!.perSecond.map((rate, i) => rate / inboxes[0]!.perSecond[i]!)),
      blockedStarted,
      rate,
    };
  } finally {
    for (const db of opened) await db.close();
    for (const database of created) await database.drop();
  }
}
