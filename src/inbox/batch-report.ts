import type { BatchDeps, Ran } from './batch-deps.js';
import { eventFields } from '../deliveries/run-handler.js';

/** After a claim's outcomes committed: warn of a lease lost before settling, tell of the dead ones (OutcomeMetrics counts them). */
export function reportSettled(deps: BatchDeps, ran: readonly Ran[], owned: ReadonlySet<number>): void {
  for (const { delivery, outcome } of ran) {
    if (!owned.has(delivery.id)) {
      deps.log.warn({ ...eventFields(delivery.event), handler: delivery.handler }, 'lease lost before settling: another worker claimed the delivery again');
      continue;
    }
    if (outcome.status === 'dead' || outcome.status === 'parked')
      deps.onDead?.(delivery.event, `${delivery.handler} ${outcome.status}: ${outcome.error ?? ''}`);
  }
}
