import type { z } from 'zod';
import type { Clock } from '../../clock.js';
import type { Queryable } from '../../db/database.js';
import type { ClaimedEvent } from '../../db/inbox-queue.js';
import type { WriteBatch } from '../../db/write-batch.js';
import type { Logger } from '../../log.js';

/** What a handler may use: the database, the claimed event (payload, receivedAt, …), time and a logger. */
export interface HandlerContext {
  /**
   * Reads and immediate writes; inside a worker batch, the batch's
   * transaction (a throw rolls them back with the event's outcome). Write your
   * own tables here: add them to `src/db/schema.ts` and run `npm run
   * db:generate` for the migration (README "Add a handler").
   */
  db: Queryable;
  /** Writes to defer to the batch's end (`batch.of(IDENTITY_MIRROR).user(…)`, `PAYMENTS_MIRROR`), applied in the same transaction. */
  batch: WriteBatch;
  event: ClaimedEvent;
  clock: Clock;
  log: Logger;
  /**
   * Aborted when the handler's time limit (`HANDLER_TIMEOUT_SECONDS`) passes:
   * pass it to `fetch` and other slow calls, and stop when it fires. The event
   * is then retried later; until the handler returns, no retry runs beside it.
   */
  signal: AbortSignal;
}

/**
 * Acts on one event. Must be idempotent and order-safe (DESIGN.md
 * "Processing"): it may run twice and may see events out of order. Throwing
 * means "retry later"; throwing `MalformedPayloadError` means "never".
 */
export type EventHandler = (ctx: HandlerContext) => Promise<void>;

/** Handlers of one source, by event type: adding a type is one entry. */
export type HandlerTable = Record<string, EventHandler>;

/**
 * The payload lacks a field the handler reads, or has it in the wrong shape.
 * Retrying cannot help, so the worker marks the event `dead` at once.
 */
export class MalformedPayloadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MalformedPayloadError';
  }
}

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

/**
 * Handlers keyed by (source, type). No entry → the event is `ignored`, which is
 * how a provider's types we do not act on are still stored and acknowledged.
 */
export class HandlerRegistry {
  private readonly handlers = new Map<string, EventHandler>();

  /** Register (or replace) the handler of one (source, type). */
  on(source: string, type: string, handler: EventHandler): this {
    this.handlers.set(`${source}\u0000${type}`, handler);
    return this;
  }

  /** Register a whole table of one source. */
  onTable(source: string, table: HandlerTable): this {
    for (const [type, handler] of Object.entries(table)) this.on(source, type, handler);
    return this;
  }

  /** The handler of (source, type), if any. */
  find(source: string, type: string): EventHandler | undefined {
    return this.handlers.get(`${source}\u0000${type}`);
  }
}
