import type { Database } from './database.js';

/** The receivers' group-commit queue as others see it (`EventWriter.queued`): inserts waiting or being written. */
export interface IngestQueue {
  readonly queued: number;
}

const POLL_MS = 2;

/**
 * Wait while the receivers have inserts queued, at most `boundMs`: on a
 * database that runs one statement at a time (PGlite), the worker's claims
 * and the console's long reads let a webhook's commit go first, and never
 * wait on it for longer than the bound.
 */
export async function letIngestGoFirst(ingest: IngestQueue | undefined, boundMs: number, stopping: () => boolean = () => false): Promise<void> {
  if (!ingest || !boundMs) return;
  const deadline = performance.now() + boundMs;
  while (ingest.queued > 0 && !stopping() && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, POLL_MS));
}

const lastTurn = new WeakMap<Database, Promise<unknown>>();

/**
 * Run one statement of a long read (a slice of a payload search) in its
 * turn. On a one-session database (`tuning.yieldToIngestMs` set) the slices
 * of concurrent searches go one at a time, each after the receivers' queued
 * inserts (bounded as above), so a webhook waits behind one slice at most,
 * whatever number of console tabs search. Elsewhere it runs at once.
 */
export function inReadTurn<T>(db: Database, ingest: IngestQueue | undefined, read: () => Promise<T>): Promise<T> {
  const boundMs = db.tuning.yieldToIngestMs ?? 0;
  if (!boundMs) return read();
  const turn = (lastTurn.get(db) ?? Promise.resolve())
    .catch(() => undefined)
    .then(() => letIngestGoFirst(ingest, boundMs))
    .then(read);
  lastTurn.set(db, turn);
  return turn;
}
