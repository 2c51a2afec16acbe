/** Flow control options as a handler file writes them (checked by the engine's flow/options.ts when the project loads). */

/** A duration, hookrun's one grammar (docs/configuration.md#durations): milliseconds, or a string such as `'500ms'`, `'30s'`, `'10m'`, `'1h'`, `'1d'`, `'1w'`. */
export type Period = number | `${number}${'ms' | 's' | 'm' | 'h' | 'd' | 'w'}`;

/** What a flow option groups deliveries by: a function of the event (a customer id, an account); strings over 256 characters are hashed. */
export type FlowKey<Ev> = (event: Ev) => string | number;

/**
 * Flow control on a handler, enforced by the database when a delivery is
 * claimed, so it holds across every instance. Each option is optional; with
 * none the handler runs inline in the inbox's batch, as fast as events come.
 */
export interface FlowOptions<Ev> {
  /** At most `limit` deliveries of this handler run at once, across instances; per value of `key` if given. */
  concurrency?: { limit: number; key?: FlowKey<Ev> };
  /** At most `limit` starts per `period` (evenly spaced: one every period/limit), per value of `key` if given. Over it, deliveries wait. */
  rateLimit?: { limit: number; period: Period; key?: FlowKey<Ev> };
  /** Events of one key arriving within `period` of each other run the handler once, with the last; `maxWait` bounds the delay. */
  debounce?: { period: Period; key: FlowKey<Ev>; maxWait?: Period };
  /** Seconds (−600 … 600) that move a delivery ahead of (or behind) others of this handler waiting to start. */
  priority?: (event: Ev) => number;
  /** `'key'`: one key's deliveries run one at a time, in the order their events were stored; one that keeps failing is parked. */
  order?: 'key';
  /** The key `order: 'key'` groups by (the other options take their own `key`, which must be this same function). */
  key?: FlowKey<Ev>;
}

/**
 * Run the handler on up to `maxSize` events at once (`run(events, ctx)`),
 * after at most `maxWait` from the oldest; with `key`, each batch holds one
 * key's events. A batch that throws is retried as a batch; `ctx.dead(id,
 * reason)` sends one member to dead alone. Limits count a batch as one run.
 */
export interface BatchOptions<Ev> {
  maxSize: number;
  maxWait: Period;
  key?: FlowKey<Ev>;
}

/** The option names `defineHandler` accepts besides on/env/description/run. */
export const FLOW_OPTION_NAMES = ['concurrency', 'rateLimit', 'debounce', 'batch', 'priority', 'order', 'key'] as const;
