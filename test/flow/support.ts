import type { Database } from '../../src/db/database.js';
import { parseFlowOptions } from '../../src/flow/options.js';
import { HandlerRegistry } from '../../src/deliveries/registry.js';

/** One call of a test handler: which event, when (the injected clock) and what it was given. */
export interface Call {
  eventId: number;
  key: string;
  at: number;
  debounced: readonly number[];
  /** A batch run: its members' event ids. */
  batch?: number[];
}

/**
 * A registry with one project-like handler `h` on test:item.changed with the
 * given flow options; it records each call, throws while `fail(call)` says so,
 * and waits on `gate` while one is set (to hold deliveries running).
 */
export function flowHandler(options: Record<string, unknown>, now: () => number) {
  const calls: Call[] = [];
  const state = {
    running: 0,
    maxRunning: 0,
    fail: (_call: Call) => false,
    gate: undefined as Promise<void> | undefined,
    /** Batch members the handler sends to dead (ctx.dead). */
    deadMembers: new Set<number>(),
  };
  const plan = parseFlowOptions(options);
  const handlers = new HandlerRegistry().on(
    'test',
    'item.changed',
    async ({ event }) => {
      const call: Call = {
        eventId: event.id,
        key: String((event.payload as { key?: string }).key),
        at: now(),
        debounced: event.debouncedIds ?? [],
        batch: event.batch?.events.map((e) => e.id),
      };
      for (const id of call.batch ?? []) if (state.deadMembers.has(id)) event.batch!.dead.set(id, `member ${id} is bad`);
      calls.push(call);
      state.running += 1;
      state.maxRunning = Math.max(state.maxRunning, state.running);
      try {
        if (state.gate) await state.gate;
        if (state.fail(call)) throw new Error(`boom ${call.eventId}`);
      } finally {
        state.running -= 1;
      }
    },
    { name: 'h', isolated: true, flow: plan },
  );
  return { handlers, calls, state };
}

/** Each delivery of handler `h`: event id → status. */
export async function deliveryStatuses(db: Database): Promise<Record<number, string>> {
  const rows = await db.query<{ event_id: number; status: string }>(
    `SELECT event_id, status FROM hookrun.handler_deliveries WHERE handler = 'h' ORDER BY event_id`,
  );
  return Object.fromEntries(rows.map((r) => [Number(r.event_id), r.status]));
}

/** How many deliveries of handler `h` run now. */
export async function runningDeliveries(db: Database): Promise<number> {
  const [row] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM hookrun.handler_deliveries WHERE handler = 'h' AND status = 'running'`);
  return Number(row!.n);
}

/** A promise and its resolver, to hold a handler running. */
export function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}
