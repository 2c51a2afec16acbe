import type { Database } from '../src/db/database.js';
import type { HandlerRegistry } from '../src/deliveries/registry.js';
import { benchWorker, storeEvents, timedClaims } from './flow-worker.js';
import { backendCpu, backendCpuSpent } from './servers.js';
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

const DRAIN_DEADLINE_MS = 600_000;

/** One database drained round after round, with what each round measured. */
export interface Inbox {
  label: string;
  /** The handler whose deliveries the drain waits for. */
  handler: string;
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
 * deliveries, or a delivery of the drained handler not finished. The
 * blocked handlers' events stay `pending` (their deliveries never start), so
 * events' statuses cannot tell.
 */
async function unfinished(db: Database, handler: string): Promise<boolean> {
  const [row] = await db.query<{ left: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM hookrun.new_events)
         OR EXISTS (SELECT 1 FROM hookrun.handler_deliveries WHERE handler = $1 AND status IN ('pending', 'failed', 'running')) AS left`,
    [handler],
  );
  return row!.left;
}

/** Store `events` events for the inbox's handler, start the worker loop, and time it until none is left unfinished. */
export async function drain(inbox: Inbox, events: number, round: string, record: boolean): Promise<number> {
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
      if (!(await unfinished(inbox.db, inbox.handler))) break;
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

export function figures(inbox: Inbox): FlowDrainFigures {
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
