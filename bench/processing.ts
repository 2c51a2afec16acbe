import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../src/db/client.js';
import type { Database } from '../src/db/database.js';
import { EventWriter } from '../src/db/event-writer.js';
import { BENCH_SECRET, makeSignedEvents } from './events.js';
import { ROOT, createDatabase, processedTotal, startHookrun, type ServerProcess, type Storage } from './servers.js';
import { percentile } from './stats.js';

/** Processing figures of one storage kind, or why they could not be measured. */
export type ProcessingFigures =
  | { available: false; reason: string }
  | {
      available: true;
      backlog: number;
      drainedPerSec: number;
      drained: number;
      lightLoadEvents: number;
      latencyP50Ms: number;
      latencyP99Ms: number;
    };

/** The worker module the processing figures depend on (issue: the inbox worker). */
const WORKER_MODULE = 'src/inbox/worker.ts';
const UNFINISHED = `'pending', 'failed'`;

/** Whether `hookrun start` can process events yet; the reason when not. */
export function processingUnavailable(): string | undefined {
  if (!existsSync(join(ROOT, WORKER_MODULE))) return `${WORKER_MODULE} (createWorker) does not exist yet`;
  return undefined;
}

async function openStorage(storage: Storage): Promise<Database> {
  const db = await openDatabase(storage.kind === 'embedded' ? { dataDir: storage.dataDir } : { databaseUrl: storage.url });
  await db.migrate();
  return db;
}

/**
 * Wait until `target` events are no longer pending: PostgreSQL is polled
 * directly; the embedded database has one process, so its /metrics counter
 * is polled instead (stopping early when it stalls; the rows tell the truth).
 */
async function waitProcessed(server: ServerProcess, storage: Storage, target: number, deadlineMs: number): Promise<void> {
  const deadline = performance.now() + deadlineMs;
  const observer = storage.kind === 'postgres' ? await openStorage(storage) : undefined;
  let last = -1;
  let lastChange = performance.now();
  try {
    while (performance.now() < deadline) {
      const done = observer
        ? target - Number((await observer.query<{ n: number }>(`SELECT count(*)::int AS n FROM hookrun.webhook_events WHERE status IN (${UNFINISHED})`))[0]!.n)
        : await processedTotal(server);
      if (done >= target) return;
      if (done !== last) [last, lastChange] = [done, performance.now()];
      else if (performance.now() - lastChange > 5_000) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await observer?.close();
  }
}

async function drain(storage: Storage, backlog: number, progress: (line: string) => void): Promise<{ drained: number; perSec: number }> {
  const db = await openStorage(storage);
  const writer = new EventWriter(db);
  const events = makeSignedEvents(backlog);
  await Promise.all(events.map((e) => writer.write({ source: 'payments', key: e.id, type: JSON.parse(e.body).type as string, payloadJson: e.body })));
  await db.close();
  const { server } = await startHookrun(storage, BENCH_SECRET);
  try {
    await waitProcessed(server, storage, backlog, 300_000);
  } finally {
    await server.stop();
  }
  const check = await openStorage(storage);
  try {
    const [row] = await check.query<{ n: number; first: number; last: number }>(
      `SELECT count(*)::int AS n, extract(epoch FROM min(processed_at)) * 1000 AS first, extract(epoch FROM max(processed_at)) * 1000 AS last
       FROM hookrun.webhook_events WHERE processed_at IS NOT NULL`,
    );
    const spanMs = Number(row!.last) - Number(row!.first);
    progress(`drain ${storage.kind}: ${row!.n}/${backlog} processed over ${spanMs.toFixed(0)} ms`);
    return { drained: row!.n, perSec: spanMs > 0 ? (row!.n * 1000) / spanMs : NaN };
  } finally {
    await check.close();
  }
}

async function lightLoad(storage: Storage, count: number, ratePerSec: number): Promise<number[]> {
  const { server } = await startHookrun(storage, BENCH_SECRET);
  const events = makeSignedEvents(count);
  try {
    for (const event of events) {
      const started = performance.now();
      const response = await fetch(`${server.url}/webhooks/payments`, {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': event.signature },
        body: event.body,
      });
      await response.arrayBuffer();
      const wait = 1000 / ratePerSec - (performance.now() - started);
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    }
    await waitProcessed(server, storage, count, 60_000);
  } finally {
    await server.stop();
  }
  const db = await openStorage(storage);
  try {
    const rows = await db.query<{ ms: number }>(
      `SELECT extract(epoch FROM processed_at - received_at) * 1000 AS ms FROM hookrun.webhook_events WHERE key = ANY($1::text[]) AND processed_at IS NOT NULL`,
      [events.map((e) => e.id)],
    );
    return rows.map((r) => Number(r.ms));
  } finally {
    await db.close();
  }
}

/**
 * Processing on one storage kind: drain a backlog of pre-inserted events
 * (rate from the rows' own processed_at span), then received → processed
 * latency of events posted one at a time at light load.
 */
export async function runProcessing(
  kind: Storage['kind'],
  databaseUrl: string | undefined,
  sizes: { backlog: number; lightLoadEvents: number },
  progress: (line: string) => void,
): Promise<ProcessingFigures> {
  const unavailable = processingUnavailable();
  if (unavailable) return { available: false, reason: unavailable };
  if (kind === 'postgres' && !databaseUrl) return { available: false, reason: 'no BENCH_DATABASE_URL / TEST_DATABASE_URL' };
  const dataDir = mkdtempSync(join(tmpdir(), 'hookrun-bench-proc-'));
  const database = kind === 'postgres' ? await createDatabase(databaseUrl!, 'proc') : undefined;
  const storage: Storage = database ? { kind: 'postgres', url: database.url } : { kind: 'embedded', dataDir };
  try {
    const drained = await drain(storage, sizes.backlog, progress);
    const latencies = await lightLoad(storage, sizes.lightLoadEvents, 50);
    if (latencies.length === 0) return { available: false, reason: 'no event was processed: is the worker wired into `hookrun start`?' };
    return {
      available: true,
      backlog: sizes.backlog,
      drained: drained.drained,
      drainedPerSec: drained.perSec,
      lightLoadEvents: latencies.length,
      latencyP50Ms: percentile(latencies, 50),
      latencyP99Ms: percentile(latencies, 99),
    };
  } finally {
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
