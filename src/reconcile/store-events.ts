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
 * Store what a sender's API lists, a page at a time as it is listed: each
 * page is written before the next is asked for, so a reconcile holds one page
 * whatever its window (a 90-day Paddle window is tens of thousands of
 * events). Each event goes through the receivers' `INSERT … ON CONFLICT
 * (source, key) DO NOTHING`: the database's unique key is the de-duplication,
 * a key already stored (or kept by retention) is left alone, and a second run
 * adds nothing. An API error half-way leaves the pages before it stored; the
 * error says how many, and a rerun stores the rest.
 */
export async function storeListedPages(input: {
  writer: Pick<EventWriter, 'write'>;
  source: string;
  since: Date;
  pages: AsyncIterable<readonly ListedEvent[]>;
  onProgress?: ReconcileProgress;
  signal?: AbortSignal;
}): Promise<ReconcileSummary> {
  const summary: ReconcileSummary = { since: input.since.toISOString(), found: 0, added: 0, alreadyStored: 0, addedIds: [] };
  const oldest = new OldestKeys(MAX_ADDED_IDS);
  try {
    for await (const page of input.pages) {
      for (let i = 0; i < page.length; i += WRITE_CHUNK) {
        input.signal?.throwIfAborted();
        const chunk = page.slice(i, i + WRITE_CHUNK);
        const stored = await Promise.all(chunk.map((e) => input.writer.write({ source: input.source, key: e.key, type: e.type, payloadJson: e.payloadJson })));
        stored.forEach((result, j) => {
          if (result.duplicate) summary.alreadyStored++;
          else {
            summary.added++;
            oldest.add(chunk[j]!);
          }
        });
        summary.found += chunk.length;
      }
      input.onProgress?.({ found: summary.found, added: summary.added });
    }
  } catch (error) {
    if (error instanceof Error && summary.found > 0)
      error.message = `${error.message} (the ${summary.found} events listed before it are stored, ${summary.added} of them new; run it again for the rest)`;
    throw error;
  }
  summary.addedIds = oldest.keys();
  return summary;
}

/** Each page of a sender's listing as the events to store, converted as it arrives. */
export async function* mapPages<T>(pages: AsyncIterable<readonly T[]>, toEvent: (item: T) => ListedEvent): AsyncIterable<ListedEvent[]> {
  for await (const page of pages) yield page.map(toEvent);
}

/** The `limit` oldest keys seen so far (by time, then key), in bounded memory: what `addedIds` shows of any number added. */
class OldestKeys {
  private kept: Array<{ key: string; atMs: number }> = [];

  constructor(private readonly limit: number) {}

  add(event: { key: string; atMs: number }): void {
    this.kept.push({ key: event.key, atMs: event.atMs });
    if (this.kept.length >= this.limit * 2) this.kept = sortOldestFirst(this.kept).slice(0, this.limit);
  }

  keys(): string[] {
    return oldestFirst(this.kept).slice(0, this.limit);
  }
}

const sortOldestFirst = <T extends { key: string; atMs: number }>(events: readonly T[]): T[] =>
  [...events].sort((a, b) => byTime(a.atMs, b.atMs) || a.key.localeCompare(b.key));

/** An unreadable time (NaN) sorts last, so trimming the kept keys always keeps the same ones. */
const byTime = (a: number, b: number) => (Number.isNaN(a) ? (Number.isNaN(b) ? 0 : 1) : Number.isNaN(b) ? -1 : a - b);

/** Keys by their event's time, then by key: the order an operator reads `addedIds` in. */
export function oldestFirst(events: ReadonlyArray<{ key: string; atMs: number }>): string[] {
  return sortOldestFirst(events).map((e) => e.key);
}

/** Milliseconds of an ISO time a sender wrote, or NaN: a listed event without a readable time is kept (never dropped by the window). */
export function isoMs(value: unknown): number {
  return typeof value === 'string' ? Date.parse(value) : NaN;
}
