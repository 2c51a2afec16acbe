import type { ClaimedDelivery } from '../deliveries/claimed.js';
import { releaseClaims } from '../deliveries/leases-sql.js';
import { runAndFlush } from '../deliveries/run-handler.js';
import { runOnItsOwn } from '../deliveries/run-alone.js';
import { StepsNeedOwnRun } from '../steps/step-signals.js';
import { noHandlerError, type DeliveryAttempts } from './attempt.js';
import type { BatchResult, Ran } from './batch-deps.js';

/** Below this much time left (or one and a half times what a delivery takes here), a delivery is not started: its claim is given back for the next pass. */
const MIN_START_MS = 250;

/**
 * How long one delivery takes here, learned as they run: a claim made against
 * a deadline takes only as many as should finish before it. Starts at 1 s,
 * so a first claim under a 10 s limit takes about 10.
 */
export class DeliveryPace {
  private estimateMs = 1000;

  /** Whether one more delivery should start with `leftMs` to go: the time one takes here, with room to spare. */
  fits(leftMs: number): boolean {
    return leftMs >= Math.max(MIN_START_MS, this.estimateMs * 1.5);
  }

  /** How many deliveries to claim with `leftMs` to go (at least 1, at most `max`). */
  claimSize(leftMs: number, max: number): number {
    return Math.max(1, Math.min(max, Math.floor(leftMs / this.estimateMs)));
  }

  /** One delivery took `ms` (a moving average: recent ones count most). */
  took(ms: number): void {
    this.estimateMs = Math.max(1, this.estimateMs * 0.7 + ms * 0.3);
  }
}

/**
 * Run a claim one delivery at a time, each in its own transaction with its
 * settle: the commit-per-delivery path of a process the platform cuts at a
 * deadline (a serverless function's `maxDuration`). A cut loses at most the
 * delivery in flight. A handler's time limit is cut to the time left, and a
 * delivery with too little time left is not started: its claim goes back
 * untouched (it does not count as an attempt) for the next pass.
 */
export async function runPaced(
  parts: DeliveryAttempts,
  pace: DeliveryPace,
  fixed: readonly Ran[],
  claims: readonly ClaimedDelivery[],
  finishBy: number,
): Promise<BatchResult> {
  const { db, log, handlerTimeoutMs } = parts.deps;
  const owned = fixed.length > 0 ? await db.transaction((tx) => parts.settle(tx, fixed)) : new Set<number>();
  const ran: Ran[] = [...fixed];
  for (const [i, delivery] of claims.entries()) {
    await parts.deps.yieldToIngest?.(); // receiving first: a webhook waiting for its commit goes before the next delivery
    const leftMs = finishBy - performance.now();
    if (!pace.fits(leftMs)) {
      const rest = claims.slice(i);
      await releaseClaims(db, rest);
      log.info({ givenBack: rest.length }, 'function time limit near: deliveries not started go back for the next pass');
      break;
    }
    const began = performance.now();
    const attempt = await runCommitted(parts, delivery, Math.min(handlerTimeoutMs, Math.floor(leftMs)));
    pace.took(performance.now() - began);
    ran.push(attempt.ran);
    if (attempt.owned) owned.add(delivery.id);
  }
  return { kind: 'committed', ran, owned };
}

/**
 * One delivery and its settle in one transaction; a failure is settled in a
 * transaction of its own. A handler with steps runs outside any (each step
 * commits as it ends), then its outcome is settled.
 */
async function runCommitted(parts: DeliveryAttempts, delivery: ClaimedDelivery, timeoutMs: number): Promise<{ ran: Ran; owned: boolean }> {
  const { db, clock } = parts.deps;
  const handler = parts.handlerOf(delivery);
  const began = performance.now();
  const startedAt = clock.now();
  const settled = async (ran: Ran) => ({ ran, owned: (await db.transaction((tx) => parts.settle(tx, [ran]))).has(delivery.id) });
  try {
    if (!handler) throw noHandlerError(delivery);
    if (!handler.usesSteps) {
      const committed = await db
        .transaction(async (tx) => {
          await runAndFlush(parts.runDeps, handler, delivery.event, tx, timeoutMs);
          const done = parts.processed(delivery, startedAt, began);
          return { ran: done, owned: (await parts.settle(tx, [done])).has(delivery.id) };
        })
        .catch((error: unknown) => (error instanceof StepsNeedOwnRun ? ((handler.usesSteps = true), undefined) : Promise.reject(error)));
      if (committed) return committed;
    }
    await runOnItsOwn(parts.runDeps, handler, delivery, db, timeoutMs);
    return await settled(parts.processed(delivery, startedAt, began));
  } catch (error) {
    return settled(parts.failure(delivery, handler, error, startedAt, began));
  }
}
