import type { Queryable } from '../db/database.js';
import {
  handlerControlStates,
  handlerDeliveryCounts,
  setHandlerPaused,
  topWaitingKeys,
  type HandlerControlState,
  type HandlerDeliveryCounts,
} from '../flow/controls.js';
import { AppError } from '../errors.js';
import { describeFlow } from '../flow/describe.js';
import type { FlowPlan } from '../flow/options.js';
import { nearestKey } from '../nearest-key.js';
import type { HandlerRegistry } from '../deliveries/registry.js';

/** What the operator's tools read of the handlers this hookrun runs: their names and flow options. */
export type HandlerCatalog = Pick<HandlerRegistry, 'names' | 'byName'>;

/** One handler as `hookrun handlers list`, `GET /api/handlers` and the dashboard show it. */
export interface HandlerOverview {
  name: string;
  /** Its flow options in one line ("concurrency 5 per key · rate 100/1s"); null when it has none. */
  flow: string | null;
  /** False for a name this hookrun no longer runs whose deliveries or pause are still recorded. */
  registered: boolean;
  paused: boolean;
  pausedAt: Date | null;
  running: number;
  /** Pending deliveries by what holds them. */
  waiting: HandlerDeliveryCounts['waiting'];
  /** Failed deliveries, due again after their backoff. */
  failed: number;
  parked: number;
  dead: number;
  /** The keys with the most deliveries waiting, most first (empty when none waits). */
  topWaitingKeys: Array<{ key: string; waiting: number }>;
}

const NOTHING_WAITING: HandlerDeliveryCounts['waiting'] = { ready: 0, concurrency: 0, rate: 0, debounce: 0, batch: 0, paused: 0 };

/** How many deliveries of a handler wait, whatever holds them. */
export const waitingTotal = (waiting: HandlerDeliveryCounts['waiting']) => Object.values(waiting).reduce((sum, n) => sum + n, 0);

/** "12: concurrency 10, ready 2": how many wait and what holds them, the largest reason first; "0" when none waits. */
export function waitingSummary(waiting: HandlerDeliveryCounts['waiting']): string {
  const reasons = Object.entries(waiting)
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1]);
  const total = reasons.reduce((sum, [, n]) => sum + n, 0);
  return total === 0 ? '0' : `${total}: ${reasons.map(([reason, n]) => `${reason} ${n}`).join(', ')}`;
}

/**
 * The deliveries counted `ready` that a limit on the whole handler holds: at
 * its concurrency limit, or before its rate limit's next start. The counts
 * see only each key's state; the handler's own is in its control row.
 */
function withHandlerLimits(
  waiting: HandlerDeliveryCounts['waiting'],
  running: number,
  plan: FlowPlan | undefined,
  control: HandlerControlState | undefined,
  now: number,
) {
  // A batch key waits for its batch to fill or its maxWait: the key's readiness counts it as `rate` unless the handler has a rate.
  if (plan?.batch && !plan.rate && waiting.rate > 0) waiting = { ...waiting, batch: waiting.batch + waiting.rate, rate: 0 };
  if (!plan || waiting.ready === 0) return waiting;
  if (plan.concurrency && !plan.concurrency.perKey && running >= plan.concurrency.limit)
    return { ...waiting, ready: 0, concurrency: waiting.concurrency + waiting.ready };
  if (plan.rate && !plan.rate.perKey && control?.nextStartAt && control.nextStartAt.getTime() > now)
    return { ...waiting, ready: 0, rate: waiting.rate + waiting.ready };
  return waiting;
}

/**
 * Every handler this hookrun runs, plus any other name with recorded
 * deliveries or a pause, by name: what holds its deliveries, so an operator
 * can tell a limit doing its job from a handler that is stuck.
 */
export async function listHandlerOverviews(
  db: Queryable,
  catalog: HandlerCatalog,
  now: number,
  options: { topKeys?: number } = {},
): Promise<HandlerOverview[]> {
  const topKeys = options.topKeys ?? 5;
  const stats = await handlerDeliveryCounts(db, now);
  const controls = await handlerControlStates(db);
  const known = new Set(catalog.names());
  const names = [...new Set([...known, ...stats.map((s) => s.handler), ...controls.filter((c) => c.paused).map((c) => c.handler)])].sort();
  const overviews: HandlerOverview[] = [];
  for (const name of names) {
    const counted = stats.find((s) => s.handler === name);
    const control = controls.find((c) => c.handler === name);
    const plan = catalog.byName(name)?.flow;
    const waiting = withHandlerLimits(counted?.waiting ?? NOTHING_WAITING, counted?.running ?? 0, plan, control, now);
    overviews.push({
      name,
      flow: plan ? describeFlow(plan) : null,
      registered: known.has(name),
      paused: control?.paused === true,
      pausedAt: control?.paused ? control.pausedAt : null,
      running: counted?.running ?? 0,
      waiting,
      failed: counted?.failed ?? 0,
      parked: counted?.parked ?? 0,
      dead: counted?.dead ?? 0,
      topWaitingKeys: topKeys > 0 && waitingTotal(waiting) > 0 ? await topWaitingKeys(db, name, topKeys) : [],
    });
  }
  return overviews;
}

/** What pausing or resuming a handler answers. */
export interface HandlerPauseState {
  handler: string;
  paused: boolean;
  /** True when this call changed the state (false: it was already so). */
  changed: boolean;
}

/** The 404 for a name no handler has: the nearest one, and every one. */
function unknownHandler(name: string, known: readonly string[]): AppError {
  const near = nearestKey(name, known);
  return new AppError(
    'not_found',
    `No handler "${name.slice(0, 100)}".${near ? ` Did you mean "${near}"?` : ''} Handlers: ${known.join(', ') || 'none'}. A handler is a file handlers/<name>.ts in your project, or a built-in one.`,
  );
}

/**
 * Pause a handler on every instance, across restarts: its deliveries
 * wait, none starts, until it is resumed. Only a handler this
 * hookrun runs can be paused; any paused name can be resumed.
 */
export async function pauseHandler(db: Queryable, catalog: HandlerCatalog, name: string, now: number): Promise<HandlerPauseState> {
  const known = catalog.names().sort();
  if (!known.includes(name)) throw unknownHandler(name, known);
  const wasPaused = await setHandlerPaused(db, name, true, now);
  return { handler: name, paused: true, changed: !wasPaused };
}

/** Resume a paused handler: its waiting deliveries start in their order, within its limits. Resuming one that is not paused changes nothing. */
export async function resumeHandler(db: Queryable, catalog: HandlerCatalog, name: string, now: number): Promise<HandlerPauseState> {
  const paused = (await handlerControlStates(db)).some((c) => c.handler === name && c.paused);
  if (!paused) {
    const known = catalog.names().sort();
    if (!known.includes(name)) throw unknownHandler(name, known);
    return { handler: name, paused: false, changed: false };
  }
  await setHandlerPaused(db, name, false, now);
  return { handler: name, paused: false, changed: true };
}
