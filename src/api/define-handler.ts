import type { Logger } from 'pino';
import type { EventName, EventOf } from './event-types.js';
import type { StripeThinEventFetchers, ThinTypeOf } from './stripe-thin-events.js';
import { readEnvNames } from './env-names.js';
import type { DurableSteps } from './steps.js';
import { FLOW_OPTION_NAMES, type BatchOptions, type FlowOptions } from './flow-options.js';

/** Marks what `defineHandler` returned, across copies of the package (a project's import and the engine's). */
export const HANDLER_BRAND = Symbol.for('hookrun.handler');

/** SQL on the delivery's transaction: your tables and hookrun's, committed with the handler's outcome. */
export interface HandlerDatabase {
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
}

/** The stored event a delivery is about (the payload itself is `run`'s first argument). */
export interface StoredEvent {
  /** hookrun's id (`hookrun events show <id>`). */
  id: number;
  /** The provider's idempotency key (e.g. Stripe's `evt_…`, Svix's `msg_…`). */
  key: string;
  /** The route it arrived on: `payments`, `auth`, `database`, `github`, … */
  source: string;
  type: string;
  receivedAt: Date;
}

/**
 * What a handler's `run` gets besides the event: the transaction, a logger,
 * its signal, its settings, durable steps (`step`, `sleep`, `sleepUntil`,
 * `waitForEvent`) and, for Stripe thin events, their objects.
 */
export interface HandlerContext<E extends string = never, N extends string = never> extends DurableSteps {
  /**
   * The delivery's transaction: a throw rolls back what this handler wrote,
   * and only that. In a handler that uses steps, each query commits on its
   * own: write inside a step, and make those writes idempotent.
   */
  db: HandlerDatabase;
  /** A logger with the event's id, key, type and this handler's name on every line. */
  log: Logger;
  /** Aborted at the handler's time limit (HANDLER_TIMEOUT_SECONDS): pass it to `fetch` and stop when it fires. */
  signal: AbortSignal;
  /** 1 on the first run of this handler for this event, 2 on its first retry, … */
  attempt: number;
  /** With `debounce`: the ids of the earlier events folded into this run (this run has the latest); empty otherwise. */
  debouncedEventIds: readonly number[];
  /** This handler's name: its file name. */
  handler: string;
  event: StoredEvent;
  /** The settings this handler named in `env`, each checked present at start-up; no other secret. */
  env: Readonly<Record<E, string>>;
  /**
   * Stripe thin events (`stripe:v1.…`, `stripe:v2.…` in `on`) carry no
   * object: `await ctx.stripe.fetchRelatedObject()` and `ctx.stripe.fetchEvent()`
   * ask Stripe for it with STRIPE_SECRET_KEY, typed by those names.
   */
  stripe: StripeThinEventFetchers<ThinTypeOf<N>>;
}

/** What a handler file writes: the events it takes, the settings it reads, what it does, and (optionally) its flow control. */
export interface HandlerSpec<N extends EventName, E extends string> extends FlowOptions<EventOf<N>> {
  /** `<provider>:<type>` entries: `stripe:invoice.paid`, `clerk:user.created`, `database:INSERT:orders`, … */
  on: readonly N[];
  /** Environment variables it needs (start-up refuses while one is unset); `ctx.env` has these and nothing else. */
  env?: readonly E[];
  description?: string;
  /**
   * Act on one event; it may run more than once and events may come out of
   * order, so make it idempotent and order-safe. Throwing retries this handler
   * alone, with backoff; `MalformedPayloadError` sends it to dead at once.
   */
  run(event: EventOf<N>, ctx: HandlerContext<E, N>): Promise<void> | void;
}

/** What a batch handler's `run` gets besides the events: the context of the batch's last event, every member, and a way to fail one member alone. */
export interface BatchHandlerContext<E extends string = never, N extends string = never> extends HandlerContext<E, N> {
  /** The stored events of this batch, in the order they were stored (as `run`'s first argument). */
  events: readonly StoredEvent[];
  /** Send one member (its `ctx.events[i].id`) to dead with the reason; the others end as the run does. */
  dead(eventId: number, reason: string): void;
}

/** A handler with `batch`: `run` receives up to `batch.maxSize` events at once. */
export interface BatchHandlerSpec<N extends EventName, E extends string> extends Omit<HandlerSpec<N, E>, 'run' | 'debounce'> {
  batch: BatchOptions<EventOf<N>>;
  /** Act on a batch; throwing retries the whole batch (members sent to `ctx.dead` stay dead). */
  run(events: Array<EventOf<N>>, ctx: BatchHandlerContext<E, N>): Promise<void> | void;
}

/** A handler as `defineHandler` returns it; its name is its file's. */
export interface HandlerDefinition<N extends EventName = EventName, E extends string = string> {
  readonly [HANDLER_BRAND]: true;
  readonly on: readonly N[];
  readonly env: readonly E[];
  readonly description: string;
  /** Its flow options as written (checked when the project loads, naming the file). */
  readonly flow: Readonly<FlowOptions<EventOf<N>> & { batch?: BatchOptions<EventOf<N>> }>;
  run(event: EventOf<N>, ctx: HandlerContext<E, N>): Promise<void> | void;
}

/**
 * What the implementation of `defineHandler` reads of a spec, checked at run time; the overloads carry the types of
 * the spec and of the definition it returns. With the overloads' own types here, TypeScript compared every provider's
 * event types to check the overloads against the implementation (about 5 s of each compile).
 */
interface WrittenSpec extends Partial<Record<(typeof FLOW_OPTION_NAMES)[number], unknown>> {
  on: readonly string[];
  env?: readonly string[];
  description?: string;
  run: (...args: never[]) => unknown;
}

/**
 * Declare a handler: `export default defineHandler({ on: ['stripe:invoice.paid'], run(event, ctx) { … } })`
 * in `handlers/<name>.ts`. `event` has the provider's own type for the names
 * in `on`. The shape is checked here; providers and types at start-up.
 */
export function defineHandler<const N extends EventName, const E extends string = never>(spec: BatchHandlerSpec<N, E>): HandlerDefinition<N, E>;
export function defineHandler<const N extends EventName, const E extends string = never>(spec: HandlerSpec<N, E>): HandlerDefinition<N, E>;
export function defineHandler(spec: WrittenSpec): object {
  if (typeof spec !== 'object' || spec === null || typeof spec.run !== 'function')
    throw new TypeError('defineHandler: pass { on: ["<provider>:<type>"], run: async (event, ctx) => { … } }');
  if (!Array.isArray(spec.on) || spec.on.length === 0)
    throw new TypeError('defineHandler: "on" must list at least one "<provider>:<type>", e.g. ["stripe:invoice.paid"]');
  const env = readEnvNames(spec.env, 'defineHandler');
  return Object.freeze({
    [HANDLER_BRAND]: true as const,
    on: Object.freeze([...spec.on]),
    env,
    description: spec.description ?? '',
    flow: Object.freeze(Object.fromEntries(FLOW_OPTION_NAMES.flatMap((name) => (spec[name] !== undefined ? [[name, spec[name]]] : [])))),
    run: spec.run,
  });
}

/**
 * Whether a module's default export is a handler (from any copy of hookrun), as the engine holds one whatever its
 * `on`: `run` gets payloads the engine has not typed. (`HandlerDefinition`'s defaults would spell out every
 * provider's event types, seconds of each compile.)
 */
export function isHandlerDefinition(value: unknown): value is HandlerDefinition<never, string> {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[HANDLER_BRAND] === true;
}
