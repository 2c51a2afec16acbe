import type { FlowPlan } from './options.js';

/** Everything a flow claim enforces for one handler, read from its flow options. */
export interface ClaimRule {
  handler: string;
  /** Deliveries of one key that may run at once; null when only limits on the whole handler apply. */
  keyLimit: number | null;
  /** One key's deliveries run one at a time in event order; one out of attempts is parked. */
  ordered: boolean;
  /** Deliveries of the handler that may run at once, all keys together; null: no such limit. */
  globalLimit: number | null;
  /** Starts spaced `intervalMs` apart (period / limit), per key or for the whole handler. */
  rate?: { intervalMs: number; perKey: boolean };
  /** A key is ready once `maxSize` wait or its oldest has waited `maxWaitMs`; a batch counts as one run. */
  batch?: { maxSize: number; maxWaitMs: number };
  /** A key runs its newest delivery once none has arrived for `periodMs` (or its oldest has waited `maxWaitMs`); the others are folded in. */
  debounce?: { periodMs: number; maxWaitMs?: number };
}

/** The claim rule a handler's flow options make. */
export function claimRuleOf(name: string, plan: FlowPlan): ClaimRule {
  return {
    handler: name,
    keyLimit: plan.ordered ? 1 : plan.concurrency?.perKey ? plan.concurrency.limit : null,
    ordered: plan.ordered,
    globalLimit: plan.concurrency && !plan.concurrency.perKey ? plan.concurrency.limit : null,
    rate: plan.rate ? { intervalMs: plan.rate.periodMs / plan.rate.limit, perKey: plan.rate.perKey } : undefined,
    batch: plan.batch ? { maxSize: plan.batch.maxSize, maxWaitMs: plan.batch.maxWaitMs } : undefined,
    debounce: plan.debounce,
  };
}
