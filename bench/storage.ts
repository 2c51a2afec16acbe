import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../src/db/client.js';
import type { Database } from '../src/db/database.js';
import { EventWriter } from '../src/db/event-writer.js';
import { retainedTableBytes } from '../src/db/retention.js';
import { prune } from '../src/retention/prune.js';
import { makeSignedEvents } from './events.js';
import { createDatabase } from './servers.js';

/** What the inbox costs on disk, and what a retention pass costs, on one storage kind. */
export interface StorageFigures {
  storage: 'embedded' | 'postgres';
  events: number;
  /** webhook_events with its indexes and TOAST, as inserted, scaled to a million events. */
  inboxMbPerMillion: number;
  /** The same once processed and vacuumed: claim and settle leave free space the next inserts reuse. */
  processedMbPerMillion: number;
  /** Beside it once processed: its deliveries (handler_deliveries), search keys (event_search) and requests (event_requests), per million. */
  besideMbPerMillion: number;
  /** webhook_event_keys (what retention keeps of a deleted event), per million. */
  keysMbPerMillion: number;
  /** Wall time of the retention pass that deleted them all. */
  pruneMs: number;
  /** Its longest single statement: the longest intake can wait behind retention (PGlite's one session). */
  longestStatementMs: number;
}

const MB = 2 ** 20;

/** Time every statement; retention's waits between saving keys and deleting are skipped (they only wait, they hold nothing). */
export function timed(db: Database, durations: number[]): Database {
  const query = async <T>(text: string, params?: unknown[]): Promise<T[]> => {
    const started = performance.now();
    try {
      return await db.query<T>(text, params);
    } finally {
      durations.push(performance.now() - started);
    }
  };
  return { ...db, query, tuning: { ...db.tuning, longestStatementMs: 0 } };
}

async function measure(db: Database, storage: StorageFigures['storage'], count: number): Promise<StorageFigures> {
  const writer = new EventWriter(db);
  for (let done = 0; done < count;) {
    const slice = makeSignedEvents(Math.min(5000, count - done));
    await Promise.all(slice.map((e) => writer.write({ source: 'payments', key: e.id, type: JSON.parse(e.body).type as string, payloadJson: e.body })));
    done += slice.length;
  }
  const inserted = await retainedTableBytes(db);
  // What a processed event looks like: taken from the queue, its one delivery settled processed (attempt 1 and its duration, no
  // attempt row), then vacuumed (steady state, no dead versions).
  await db.query('DELETE FROM hookrun.new_events');
  await db.query(
    `INSERT INTO hookrun.handler_deliveries (event_id, handler, status, attempts, started_at, duration_ms, finished_at)
     SELECT id, 'payments', 'processed', 1, now(), 4, now() FROM hookrun.webhook_events`,
  );
  await db.query(`UPDATE hookrun.webhook_events SET status = 'processed', attempts = 1, processed_at = now(), received_at = now() - interval '40 days'`);
  for (const table of ['webhook_events', 'new_events', 'handler_deliveries']) await db.query(`VACUUM hookrun.${table}`);
  const [rest] = await db.query<{ bytes: string }>(
    `SELECT pg_total_relation_size('hookrun.handler_deliveries') + pg_total_relation_size('hookrun.event_search')
          + pg_total_relation_size('hookrun.event_requests') AS bytes`,
  );
  const before = await retainedTableBytes(db);
  const durations: number[] = [];
  const started = performance.now();
  const report = await prune(timed(db, durations), { events: 30, dedupeKeys: 90, cronRuns: 90 }, Date.now());
  const pruneMs = performance.now() - started;
  await db.query('VACUUM hookrun.webhook_event_keys');
  const after = await retainedTableBytes(db);
  if (report.events !== count) throw new Error(`storage bench: retention deleted ${report.events} of ${count} events`);
  return {
    storage,
    events: count,
    inboxMbPerMillion: ((inserted.webhook_events ?? 0) / count) * (1e6 / MB),
    processedMbPerMillion: ((before.webhook_events ?? 0) / count) * (1e6 / MB),
    besideMbPerMillion: (Number(rest!.bytes) / count) * (1e6 / MB),
    keysMbPerMillion: ((after.webhook_event_keys ?? 0) / count) * (1e6 / MB),
    pruneMs,
    longestStatementMs: Math.max(...durations),
  };
}

/** Fill a fresh inbox with `count` bench events (~1.5 KB Stripe events), measure its size, prune it, measure the keys. */
export async function runStorage(
  kind: StorageFigures['storage'],
  databaseUrl: string | undefined,
  count: number,
  progress: (line: string) => void,
): Promise<StorageFigures | undefined> {
  if (kind === 'postgres' && !databaseUrl) return undefined;
  const dataDir = kind === 'embedded' ? mkdtempSync(join(tmpdir(), 'hookrun-bench-storage-')) : undefined;
  const database = kind === 'postgres' ? await createDatabase(databaseUrl!, 'storage') : undefined;
  const db = await openDatabase(dataDir ? { dataDir, fsync: false } : { databaseUrl: database!.url });
  try {
    await db.migrate();
    const figures = await measure(db, kind, count);
    progress(
      `storage ${kind}: ${figures.inboxMbPerMillion.toFixed(0)} MB per million events (${figures.processedMbPerMillion.toFixed(0)} processed, ${figures.besideMbPerMillion.toFixed(0)} beside it), keys ${figures.keysMbPerMillion.toFixed(0)} MB; prune ${figures.pruneMs.toFixed(0)} ms, longest statement ${figures.longestStatementMs.toFixed(1)} ms`,
    );
    return figures;
  } finally {
    await db.close();
    await database?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
}
