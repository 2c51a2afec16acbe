import type { Database } from '../db/database.js';
import { DeliverySteps } from '../steps/delivery-steps.js';
import { StepsNeedOwnRun } from '../steps/step-signals.js';
import type { ClaimedDelivery } from './claimed.js';
import type { RegisteredHandler } from './registry.js';
import { runAndFlush, type HandlerRunDeps } from './run-handler.js';

/**
 * One delivery on its own (not in a batch's shared transaction). A project
 * handler gets a transaction of its own where long ones are cheap
 * (PostgreSQL); PGlite's one session cannot hold it. A handler with steps
 * runs outside any, so each step's end commits as it ends: learned at its
 * first step (that transaction rolls back and it runs again outside).
 */
export async function runOnItsOwn(deps: HandlerRunDeps, handler: RegisteredHandler, delivery: ClaimedDelivery, db: Database, timeoutMs: number): Promise<void> {
  const steps = new DeliverySteps({ db, clock: deps.clock, fence: { deliveryId: delivery.id, attempts: delivery.attempts } });
  if (!handler.isolated || db.tuning.inTransactionBudgetMs !== undefined || handler.usesSteps) {
    await runAndFlush(deps, handler, delivery.event, db, timeoutMs, steps);
    return;
  }
  const ownRun = await db
    .transaction((tx) => runAndFlush(deps, handler, delivery.event, tx, timeoutMs))
    .then(
      () => false,
      (error: unknown) => (error instanceof StepsNeedOwnRun ? true : Promise.reject(error)),
    );
  if (!ownRun) return;
  handler.usesSteps = true;
  await runAndFlush(deps, handler, delivery.event, db, timeoutMs, steps);
}
