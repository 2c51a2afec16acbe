import type { Queryable } from './database.js';

/** One family of writes a batch can defer: queued while handlers run, applied once at the batch's end. */
export interface DeferredWrites {
  flush(db: Queryable): Promise<unknown>;
}

/** How many queued writes of a family changed a row (the rest were stale or did not apply). */
export interface FlushResult {
  written: number;
}

/**
 * Split a family's queue into rounds, the k-th write to a row in round k:
 * `INSERT … ON CONFLICT DO UPDATE` may touch a row once per statement, and
 * applying the rounds in turn gives each row its writes in queue order.
 */
export function rounds<T>(items: T[], idOf: (item: T) => string): T[][] {
  const seen = new Map<string, number>();
  const out: T[][] = [];
  for (const item of items) {
    const id = idOf(item);
    const round = seen.get(id) ?? 0;
    seen.set(id, round + 1);
    (out[round] ??= []).push(item);
  }
  return out;
}

/** How a batch makes a family's queue: `batch.of(PAYMENTS_MIRROR)`. */
export interface WriteFamily<T extends DeferredWrites> {
  readonly name: string;
  create(): T;
}

/** A family whose flush says how many of its writes changed a row (the mirrors'). */
export interface CountedWrites extends DeferredWrites {
  flush(db: Queryable): Promise<FlushResult>;
}

/** Apply one write of a family now, as a batch of one on `db`; true when it changed a row (false: stale). */
export async function writeNow<T extends CountedWrites>(family: WriteFamily<T>, db: Queryable, queue: (writes: T) => void): Promise<boolean> {
  const writes = family.create();
  queue(writes);
  return (await writes.flush(db)).written > 0;
}

/**
 * The deferred writes of one worker batch. Handlers ask it for their table
 * family's queue (`ctx.batch.of(FAMILY)`); the worker flushes the whole batch
 * once, in the batch's transaction, before it settles the events, and knows
 * no table. A family applies its queue in few multi-row statements, with the
 * same result as the writes one by one.
 */
export class WriteBatch {
  private readonly families = new Map<WriteFamily<DeferredWrites>, DeferredWrites>();

  /** This batch's queue of one family, made on first use. */
  of<T extends DeferredWrites>(family: WriteFamily<T>): T {
    let queue = this.families.get(family);
    if (!queue) {
      queue = family.create();
      this.families.set(family, queue);
    }
    return queue as T;
  }

  /** Apply every family's queue on `db`, in the order the families were first used; the batch is empty after. */
  async flush(db: Queryable): Promise<void> {
    const queues = [...this.families.values()];
    this.families.clear();
    for (const queue of queues) await queue.flush(db);
  }
}
