/** The stored event a delivery is about, as its handler runs it. */
export interface ClaimedEvent {
  id: number;
  source: string;
  key: string;
  type: string;
  payload: unknown;
  receivedAt: Date;
  /** This delivery's attempt in its run: 1 on the first (a replay starts again at 1). */
  attempts: number;
  /** A captured database change's row identity (`schema.table` and its key): each handler runs one row's changes in commit order. */
  orderKey?: string | null;
  /** A debounced run: the earlier events folded into it (flow control). */
  debouncedIds?: readonly number[];
  /** A batch run (flow control): every member, and the members its handler sent to dead (id → reason). */
  batch?: { events: readonly ClaimedEvent[]; dead: Map<number, string> };
}

/** One handler's delivery of one event, claimed: this worker runs it until its lease ends. */
export interface ClaimedDelivery {
  /** The delivery's id (handler_deliveries). */
  id: number;
  handler: string;
  /** Counts this claim (1 on the first run); the fencing token its settle must match. */
  attempts: number;
  /** Its flow key; null for a handler without flow options outside a captured row. */
  flowKey: string | null;
  /** Its event has other deliveries. */
  shared: boolean;
  /** When it may start (a rate limit's slot; the claim's time otherwise), ms epoch. */
  startAt: number;
  event: ClaimedEvent;
}

/** How one attempt of a delivery ended, as its settle writes it. */
export interface DeliveryOutcome {
  id: number;
  eventId: number;
  attempts: number;
  /**
   * `failed`: due again at `runAfter`; `parked`: an ordered delivery out of
   * attempts (its key goes on); `pending`: asleep or waiting until `runAfter`
   * (a step's sleep or wait: not a failed attempt).
   */
  status: 'processed' | 'failed' | 'dead' | 'parked' | 'pending';
  error?: string;
  stack?: string;
  runAfter?: number;
  startedAt: number;
  durationMs: number;
}

/** A delivery's event as a claim reads it from its row. */
export interface EventRow {
  id: number | string;
  source: string;
  key: string;
  type: string;
  payload: unknown;
  received_at: Date | string;
  order_key: string | null;
}

/** The claimed event of a row (`attempts`: the delivery's). */
export function claimedEvent(row: EventRow, attempts: number, debouncedIds?: readonly number[]): ClaimedEvent {
  return {
    id: Number(row.id),
    source: row.source,
    key: row.key,
    type: row.type,
    payload: typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload,
    receivedAt: new Date(row.received_at),
    attempts,
    orderKey: row.order_key,
    debouncedIds,
  };
}

/** A claimed delivery's row with its event's. */
export interface ClaimedRow extends EventRow {
  delivery_id: number | string;
  handler: string;
  attempts: number;
  flow_key: string | null;
  shared: boolean;
  debounced_ids: Array<number | string> | null;
}

/** A claimed row as the worker runs it, starting at `startAt`. */
export function claimedDelivery(row: ClaimedRow, startAt: number): ClaimedDelivery {
  const attempts = Number(row.attempts);
  const debounced = row.debounced_ids?.map(Number);
  return {
    id: Number(row.delivery_id),
    handler: row.handler,
    attempts,
    flowKey: row.flow_key,
    shared: row.shared === true,
    startAt,
    event: claimedEvent(row, attempts, debounced && debounced.length > 0 ? debounced : undefined),
  };
}
