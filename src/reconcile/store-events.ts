import type { EventWriter } from '../db/event-writer.js';
import { MAX_ADDED_IDS, type ReconcileProgress, type ReconcileSummary } from './summary.js';

/** One event as a sender's webhook route would store it: its route, key, type and the JSON it delivers. */
export interface ListedEvent {
  key: string;
  type: string;
  payloadJson: string;
  /** The event's own time (ms): `addedIds` are listed oldest first. */
  atMs: number;
}

/** Writes handed to the group-commit writer at once. */
const WRITE_CHUNK = 100;

/**
 * Store what a sender's API listed, after every page was read (so an API
 * error half-way stores nothing), through the receivers' `INSERT … ON
 * CONFLICT (source, key) DO NOTHING`: a key already stored (or kept by
 * retention) is left alone, so a second run adds nothing.
 */
export async function storeListedEvents(input: {
  writer: Pick<EventWriter, 'write'>;
  source: string;
  since: Date;
  events: readonly ListedEvent[];
  onProgress?: ReconcileProgress;
  signal?: AbortSignal;
}): Promise<ReconcileSummary> {
  const summary: ReconcileSummary = { since: input.since.toISOString(), found: input.events.length, added: 0, alreadyStored: 0, addedIds: [] };
  const added: ListedEvent[] = [];
  for (let i = 0; i < input.events.length; i += WRITE_CHUNK) {
    input.signal?.throwIfAborted();
    const chunk = input.events.slice(i, i + WRITE_CHUNK);
    const stored = await Promise.all(chunk.map((e) => input.writer.write({ source: input.source, key: e.key, type: e.type, payloadJson: e.payloadJson })));
    stored.forEach((result, j) => (result.duplicate ? summary.alreadyStored++ : added.push(chunk[j]!)));
    summary.added = added.length;
    input.onProgress?.({ found: summary.found, added: summary.added });
  }
  summary.addedIds = oldestFirst(added).slice(0, MAX_ADDED_IDS);
  return summary;
}

/** Keys by their event's time, then by key: the order an operator reads `addedIds` in. */
export function oldestFirst(events: ReadonlyArray<{ key: string; atMs: number }>): string[] {
  return [...events].sort((a, b) => a.atMs - b.atMs || a.key.localeCompare(b.key)).map((e) => e.key);
}

/** Milliseconds of an ISO time a sender wrote, or NaN: a listed event without a readable time is kept (never dropped by the window). */
export function isoMs(value: unknown): number {
  return typeof value === 'string' ? Date.parse(value) : NaN;
}
