import type { DurableSteps } from '../api/steps.js';
import type { HandlerContext as EngineHandlerContext } from '../deliveries/registry.js';
import type { DeliverySteps } from '../steps/delivery-steps.js';
import { StepError, StepsNeedOwnRun } from '../steps/step-signals.js';
import type { WaitScope } from '../steps/wait-for-event.js';

/**
 * A project handler's `ctx.step`, `ctx.sleep`, `ctx.sleepUntil` and
 * `ctx.waitForEvent`, over the delivery's steps. Called where the delivery
 * runs in a shared transaction, a step refuses (StepsNeedOwnRun) and the
 * runner runs the delivery on its own; a batch handler's run has no steps.
 */
export function durableSteps(ctx: EngineHandlerContext, resolveEventName: WaitScope['resolveEventName'], batch: boolean): DurableSteps {
  const steps = (): DeliverySteps => {
    if (batch)
      throw new StepError(
        'A batch handler cannot use steps (ctx.step, ctx.sleep, ctx.waitForEvent): its run covers many deliveries. Drop `batch`, or the steps.',
        {
          terminal: true,
        },
      );
    if (ctx.steps) return ctx.steps;
    ctx.stepsRefused = true;
    throw new StepsNeedOwnRun();
  };
  const scope: WaitScope = { event: ctx.event, resolveEventName };
  return {
    step: (id, fn, options) => steps().step(id, fn, options),
    sleep: (id, duration) => steps().sleep(id, duration),
    sleepUntil: (id, at) => steps().sleepUntil(id, at),
    waitForEvent: (id, options) => steps().waitForEvent(id, options, scope) as never,
  };
}
