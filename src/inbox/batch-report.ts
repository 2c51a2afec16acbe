import type { ClaimedEvent } from '../db/inbox-queue.js';
import type { BatchDeps, BatchResult } from './batch-deps.js';
import { eventFields } from './handler-run.js';

/** After a claim's outcomes committed: count each settled event, warn of a lease lost before settling, tell of the dead ones. */
export function reportSettled(deps: BatchDeps, claims: ClaimedEvent[], result: Extract<BatchResult, { kind: 'committed' }>): void {
  const owned = new Set(result.owned);
  const byId = new Map(claims.map((c) => [c.id, c]));
  for (const settlement of result.settlements) {
    const event = byId.get(settlement.id)!;
    if (!owned.has(settlement.id)) {
      deps.log.warn(eventFields(event), 'lease lost before settling: another worker claimed the event again');
      continue;
    }
    deps.metrics.eventsProcessed.inc({ source: event.source, outcome: settlement.status });
    if (settlement.status === 'dead') deps.onDead?.(event, settlement.error);
  }
}
