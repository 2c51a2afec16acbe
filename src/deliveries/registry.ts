import type { z } from 'zod';
import { MalformedPayloadError } from '../api/malformed-payload.js';
import type { Clock } from '../clock.js';
import type { Queryable } from '../db/database.js';
import type { ClaimedEvent } from './claimed.js';
import type { WriteBatch } from '../db/write-batch.js';
import type { Logger } from '../log.js';
import type { FlowPlan } from '../flow/options.js';
import type { DeliverySteps } from '../steps/delivery-steps.js';

/**
 * What an engine handler may use (the shipped mirrors; a project's handlers
 * get the public `HandlerContext` of api/define-handler.ts, built from this):
 * the database, the claimed event (payload, receivedAt, …), time and a logger.
 */
export interface HandlerContext {
  /**
   * Reads and immediate writes; inside a worker batch, the batch's
   * transaction (a throw rolls them back with the event's outcome, or, for
   * an isolated handler, only its own writes).
   */
  db: Queryable;
  /** Writes to defer to the batch's end (`batch.of(IDENTITY_MIRROR).user(…)`, `PAYMENTS_MIRROR`), applied in the same transaction. */
  batch: WriteBatch;
  event: ClaimedEvent;
  clock: Clock;
  /** This handler's name (several may take one event; each settles on its own). */
  handler: string;
  log: Logger;
  /**
   * Aborted when the handler's time limit (`HANDLER_TIMEOUT_SECONDS`) passes:
   * pass it to `fetch` and other slow calls, and stop when it fires. The event
   * is then retried later; until the handler returns, no retry runs beside it.
   */
  signal: AbortSignal;
  /**
   * The delivery's durable steps, where it runs outside a shared transaction
   * (each step's end commits on its own); undefined inside one, where a step
   * call throws StepsNeedOwnRun and the runner runs it alone.
   */
  steps?: DeliverySteps;
  /** Set when the handler called a step without `steps`: it ran in a shared transaction and must run alone (even if it caught the refusal). */
  stepsRefused?: boolean;
}

/**
 * Acts on one event. Must be idempotent and order-safe, because delivery is at
 * least once and senders do not keep order: it may run twice and may see events out of order. Throwing
 * means "retry later"; throwing `MalformedPayloadError` means "never".
 */
export type EventHandler = (ctx: HandlerContext) => Promise<void>;

/** Handlers of one source, by event type: adding a type is one entry. */
export type HandlerTable = Record<string, EventHandler>;

/** The payload cannot be handled, ever (it lives with the public API; re-exported for the shipped handlers beside this file). */
export { MalformedPayloadError };

/** Validate only what a handler reads; a mismatch becomes `MalformedPayloadError` naming each bad field. */
export function parsePayload<S extends z.ZodType>(schema: S, event: ClaimedEvent): z.output<S> {
  const result = schema.safeParse(event.payload);
  if (result.success) return result.data;
  const problems = result.error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(root)'}: ${issue.message}`)
    .join('; ');
  throw new MalformedPayloadError(`Malformed ${event.source} ${event.type} payload: ${problems}`);
}

/** One handler as the worker runs it: its name is its identity (attempts, dead letters, replay, metrics). */
export interface RegisteredHandler {
  name: string;
  run: EventHandler;
  /**
   * Run inside a savepoint of the batch's transaction, so a throw rolls back
   * its own writes only and a failed statement does not abort the batch.
   * A project's handlers are isolated; the shipped mirrors write only at the
   * batch's flush and need not be.
   */
  isolated: boolean;
  /** Whether this event is for it at all (e.g. a database change of one table); absent: every event of its types. */
  accepts?: (event: Pick<ClaimedEvent, 'source' | 'type' | 'payload'>) => boolean;
  /** Its flow options: its deliveries wait for the flow claimer (flow/claim.ts) instead of running inline. */
  flow?: FlowPlan;
  /** Learned at its first step: from then on its deliveries run outside any shared transaction, so each step's end commits when it ends. */
  usesSteps?: boolean;
}

/** How to register a handler: its name (default: the source), whether it runs in a savepoint, and its flow options. */
export interface RegisterOptions {
  name?: string;
  isolated?: boolean;
  accepts?: (event: Pick<ClaimedEvent, 'source' | 'type' | 'payload'>) => boolean;
  flow?: FlowPlan;
}

/**
 * Handlers keyed by (source, type), several per type, each with a name. No
 * entry → the event is `ignored`, which is how a provider's types we do not
 * act on are still stored and acknowledged.
 */
export class HandlerRegistry {
  private readonly handlers = new Map<string, RegisteredHandler[]>();

  /** Register the handler of one (source, type); a second one of the same name replaces the first. */
  on(source: string, type: string, handler: EventHandler, options: RegisterOptions = {}): this {
    const key = `${source}\u0000${type}`;
    const entry: RegisteredHandler = {
      name: options.name ?? source,
      run: handler,
      isolated: options.isolated ?? false,
      accepts: options.accepts,
      flow: options.flow,
    };
    const list = (this.handlers.get(key) ?? []).filter((h) => h.name !== entry.name);
    list.push(entry);
    this.handlers.set(key, list);
    return this;
  }

  /** Register a whole table of one source under one handler name. */
  onTable(source: string, table: HandlerTable, options: RegisterOptions = {}): this {
    for (const [type, handler] of Object.entries(table)) this.on(source, type, handler, options);
    return this;
  }

  /** The handlers of this event, in registration order; empty when none takes it. */
  find(event: Pick<ClaimedEvent, 'source' | 'type' | 'payload'>): readonly RegisteredHandler[] {
    const list = this.handlers.get(`${event.source}\u0000${event.type}`) ?? NONE;
    return list.some((h) => h.accepts) ? list.filter((h) => !h.accepts || h.accepts(event)) : list;
  }

  /** Every handler name registered, once each (replay and listings check names against it). */
  names(): string[] {
    return [...new Set([...this.handlers.values()].flat().map((h) => h.name))];
  }

  /** One registered handler by name (the flow claimer runs deliveries by handler, not by type): one with flow options if any. */
  byName(name: string): RegisteredHandler | undefined {
    let found: RegisteredHandler | undefined;
    for (const list of this.handlers.values()) for (const h of list) if (h.name === name && (!found || (!found.flow && h.flow))) found = h;
    return found;
  }

  /** Every handler with flow options, once each. */
  flowControlled(): RegisteredHandler[] {
    return this.names()
      .map((name) => this.byName(name)!)
      .filter((h) => h.flow !== undefined);
  }
}

const NONE: readonly RegisteredHandler[] = Object.freeze([]);
