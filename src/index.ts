/**
 * hookrun's public API: what a project's `jobs/` and `handlers/` files
 * import. Everything else in this package is engine and may change in any
 * release; these names follow semantic versioning.
 */

/** Declare a job: `export default defineJob({ env: ['SLACK_TOKEN'], run(ctx) { … } })` in `jobs/<name>.ts` serves `/cron/<name>`. */
export { defineJob } from './api/define-job.js';
/** A job's context (its SQL, its settings, its signal), its spec, its policies and what `defineJob` returns. */
export type {
  CatchUpPolicy,
  JobContext,
  JobDatabase,
  JobDefinition,
  JobPolicies,
  JobSpec,
  JobTransaction,
  JobTrigger,
  OverlapPolicy,
  RetryPolicy,
} from './api/define-job.js';

/** Declare a handler: `export default defineHandler({ on: ['stripe:invoice.paid'], run(event, ctx) { … } })` in `handlers/<name>.ts`. */
export { defineHandler } from './api/define-handler.js';
/** A handler's context, its spec and what `defineHandler` returns. */
export type {
  BatchHandlerContext,
  BatchHandlerSpec,
  HandlerContext,
  HandlerDatabase,
  HandlerDefinition,
  HandlerSpec,
  StoredEvent,
} from './api/define-handler.js';
/** Durable steps on a handler's context: a step's options and what `ctx.waitForEvent` waits for. */
export type { DurableSteps, StepOptions, WaitForEventOptions } from './api/steps.js';
/** Flow control options on a handler: concurrency, rate, debounce, priority, order by key. */
export type { BatchOptions, FlowKey, FlowOptions } from './api/flow-options.js';
/** A duration, as flow options and job policies take it: milliseconds or "500ms", "30s", "10m", "1h", "1d", "1w". */
export type { Period } from './api/flow-options.js';
/** The event names `on` accepts and the payload type each one gives `run`. */
export type { CustomSenders, DatabaseChange, EventName, EventOf } from './api/event-types.js';
/** Stripe thin events: their payload type, their types, and `ctx.stripe`'s fetchers for their objects. */
export type { StripeThinEvent, StripeThinEventFetchers, StripeThinEventType } from './api/stripe-thin-events.js';

/** Throw it from a handler when the payload cannot be handled, ever: the delivery goes dead at once, without retries. */
export { MalformedPayloadError } from './api/malformed-payload.js';
