import { FLOW_OPTION_NAMES } from '../api/flow-options.js';
import { parseDuration } from '../time/duration.js';

/** The engine's reading of a handler's flow options: checked, with periods in milliseconds. */
export interface FlowPlan {
  key?: (payload: unknown) => unknown;
  concurrency?: { limit: number; perKey: boolean };
  rate?: { limit: number; periodMs: number; perKey: boolean };
  debounce?: { periodMs: number; maxWaitMs?: number };
  batch?: { maxSize: number; maxWaitMs: number; perKey: boolean };
  priority?: (payload: unknown) => unknown;
  ordered: boolean;
}

/** The most events one batch run receives. */
export const MAX_BATCH_SIZE = 1000;

/** The longest a priority moves a delivery, in seconds: nothing waits more than this behind later arrivals. */
export const MAX_PRIORITY_SECONDS = 600;

const positiveInt = (value: unknown) => typeof value === 'number' && Number.isInteger(value) && value > 0;
const shown = (value: unknown) => (typeof value === 'string' ? JSON.stringify(value) : String(value));

function limitOf(option: string, value: unknown, example: string): number {
  if (!positiveInt(value)) throw new Error(`${option}.limit must be a positive integer (got ${shown(value)}); e.g. ${example}.`);
  return value as number;
}

const periodOf = (option: string, value: unknown): number => parseDuration(value, option);

function keyOf(option: string, value: unknown): FlowPlan['key'] {
  if (value === undefined) return undefined;
  if (typeof value !== 'function')
    throw new Error(`${option} must be a function of the event returning a string or number, e.g. (event) => event.data.object.customer.`);
  return value as FlowPlan['key'];
}

/**
 * Check a handler's flow options and read them into a plan; undefined when it
 * sets none. Throws a message naming the option and the fix: a limit that is
 * not a positive integer, a period that does not parse, a key that is not a
 * function, `debounce` without a key, `order: 'key'` without one, `debounce`
 * with `batch`, or two
 * different key functions (a handler groups by one key).
 */
export function parseFlowOptions(spec: Record<string, unknown>): FlowPlan | undefined {
  if (FLOW_OPTION_NAMES.every((name) => spec[name] === undefined)) return undefined;
  const object = (name: string) => {
    const value = spec[name];
    if (value !== undefined && (typeof value !== 'object' || value === null)) throw new Error(`${name} must be an object, e.g. ${name}: { limit: 5 }.`);
    return value as Record<string, unknown> | undefined;
  };
  const concurrency = object('concurrency');
  const rateLimit = object('rateLimit');
  const debounce = object('debounce');
  const batch = object('batch');
  const keys = [
    ['key', keyOf('key', spec.key)],
    ['concurrency.key', concurrency && keyOf('concurrency.key', concurrency.key)],
    ['rateLimit.key', rateLimit && keyOf('rateLimit.key', rateLimit.key)],
    ['debounce.key', debounce && keyOf('debounce.key', debounce.key)],
    ['batch.key', batch && keyOf('batch.key', batch.key)],
  ].filter((entry): entry is [string, NonNullable<FlowPlan['key']>] => entry[1] !== undefined);
  const distinct = [...new Set(keys.map(([, fn]) => fn))];
  if (distinct.length > 1)
    throw new Error(
      `${keys.map(([name]) => name).join(' and ')} are different functions; a handler groups its deliveries by one key: define it once (const key = (event) => …) and pass the same function to each option.`,
    );
  const plan: FlowPlan = { key: distinct[0], ordered: false };
  if (concurrency) plan.concurrency = { limit: limitOf('concurrency', concurrency.limit, 'concurrency: { limit: 5 }'), perKey: concurrency.key !== undefined };
  if (rateLimit) {
    const limit = limitOf('rateLimit', rateLimit.limit, "rateLimit: { limit: 100, period: '1s' }");
    plan.rate = { limit, periodMs: periodOf('rateLimit.period', rateLimit.period), perKey: rateLimit.key !== undefined };
  }
  if (debounce) {
    if (debounce.key === undefined)
      throw new Error("debounce needs a key: the events it folds into one run share it, e.g. debounce: { period: '5s', key: (event) => event.data.id }.");
    const maxWaitMs = debounce.maxWait === undefined ? undefined : periodOf('debounce.maxWait', debounce.maxWait);
    plan.debounce = { periodMs: periodOf('debounce.period', debounce.period), maxWaitMs };
  }
  if (batch) {
    if (debounce)
      throw new Error('debounce and batch cannot be combined on one handler: debounce runs the last event of a key, batch runs them all at once; keep one.');
    if (!positiveInt(batch.maxSize) || (batch.maxSize as number) > MAX_BATCH_SIZE)
      throw new Error(
        `batch.maxSize must be an integer from 1 to ${MAX_BATCH_SIZE} (got ${shown(batch.maxSize)}); e.g. batch: { maxSize: 100, maxWait: '5s' }.`,
      );
    plan.batch = { maxSize: batch.maxSize as number, maxWaitMs: periodOf('batch.maxWait', batch.maxWait), perKey: batch.key !== undefined };
  }
  if (spec.priority !== undefined) {
    if (typeof spec.priority !== 'function') throw new Error('priority must be a function of the event returning seconds between -600 and 600.');
    plan.priority = spec.priority as FlowPlan['priority'];
  }
  if (spec.order !== undefined) {
    if (spec.order !== 'key') throw new Error(`order must be 'key' (got ${shown(spec.order)}).`);
    if (spec.key === undefined) throw new Error("order: 'key' needs key: a function of the event whose deliveries run one at a time, in order.");
    if (plan.debounce)
      throw new Error("order: 'key' and debounce cannot be combined: debounce runs only the last event of a key, order runs every one in turn.");
    if (plan.batch) throw new Error("order: 'key' and batch cannot be combined: order runs one event of a key at a time; use batch with a key instead.");
    plan.ordered = true;
  }
  return plan;
}
