import type { FlowPlan } from './options.js';

/** What operator listings print for a handler without flow options. */
export const NO_FLOW = '—';

const UNITS: ReadonlyArray<readonly [suffix: string, ms: number]> = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1000],
];

/** A period in the shortest unit it is a whole number of (`1s`, `10m`, `1500ms`), as a handler's author writes it. */
export function formatPeriod(ms: number): string {
  for (const [suffix, size] of UNITS) if (ms >= size && ms % size === 0) return `${ms / size}${suffix}`;
  return `${ms}ms`;
}

/**
 * A handler's flow options in one line, so an operator sees why its
 * deliveries wait without reading its file: "concurrency 5 per key · rate
 * 100/1s · order by key · debounce 5s"; `NO_FLOW` when it has none.
 */
export function describeFlow(plan: FlowPlan | undefined): string {
  if (!plan) return NO_FLOW;
  const parts: string[] = [];
  const perKey = (yes: boolean) => (yes ? ' per key' : '');
  if (plan.concurrency) parts.push(`concurrency ${plan.concurrency.limit}${perKey(plan.concurrency.perKey)}`);
  if (plan.rate) parts.push(`rate ${plan.rate.limit}/${formatPeriod(plan.rate.periodMs)}${perKey(plan.rate.perKey)}`);
  if (plan.ordered) parts.push('order by key');
  if (plan.debounce)
    parts.push(
      `debounce ${formatPeriod(plan.debounce.periodMs)}${plan.debounce.maxWaitMs === undefined ? '' : ` (max ${formatPeriod(plan.debounce.maxWaitMs)})`}`,
    );
  if (plan.batch) parts.push(`batch ${plan.batch.maxSize} within ${formatPeriod(plan.batch.maxWaitMs)}${perKey(plan.batch.perKey)}`);
  if (plan.priority) parts.push('priority');
  return parts.length > 0 ? parts.join(' · ') : NO_FLOW;
}
