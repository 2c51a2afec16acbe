import { openDatabase } from '../src/db/client.js';
import type { Database } from '../src/db/database.js';
import { countEventsByStatus } from '../src/db/event-counts.js';
import { EventWriter } from '../src/db/event-writer.js';
import { BENCH_SECRET, makeSignedEvents } from './events.js';
import { runIngest, type IngestFigures, type IngestOptions } from './ingest.js';
import { fillProcessed, inboxBytes, measureRetention, reserveIds, type FillPlan, type ScaleRetention } from './scale-fill.js';
import { backendCpu, backendCpuSpent, cpuMs, createDatabase, startHookrun, type ServerProcess } from './servers.js';
import { spread, type Spread } from './stats.js';

/** The figures at one inbox size. */
export interface ScaleStep {
  /** Processed events filled in (0: the empty inbox). */
  size: number;
  /** webhook_events rows when measured: the fill plus what earlier measurements stored. */
  rows: number;
  /** Time to fill up to this size from the previous one, and the VACUUM ANALYZE after it. */
  fillMs: number;
  vacuumMs: number;
  /** webhook_events with TOAST and indexes, and event_attempts, after the fill. */
  eventsMb: number;
  /** handler_deliveries and event_attempts. */
  deliveriesMb: number;
  ingest: IngestFigures;
  /** An empty inbox in the same rotation (A B A B), so the ratio survives a shared machine; absent for the empty step. */
  ingestEmpty?: IngestFigures;
  drainPerSec: Spread;
  drainEmptyPerSec?: Spread;
  /** CPU ms per drained event, hookrun and PostgreSQL, by side (median over the drains). */
  drainCpu: Record<string, { hookrun: Spread; db: Spread }>;
  /** Rows of the last backlog processed (of `backlog`). */
  drained: number;
  /** `countEventsByStatus` (what /metrics, the dashboard and the admin API sample) on the filled side: a fresh count, then one right after (reused from 100,000 settled events on). */
  statusCountsMs: { fresh: number; next: number };
  /** Index reads during this size's ingest and drains, by side and index (pg_stat_user_indexes deltas): where a growing cost would show. */
  indexReads: Record<string, Record<string, { scans: number; tuples: number }>>;
}

/** The scale section: the same ingest and drain with the inbox empty, then filled to each size; retention at the largest. */
export type ScaleFigures =
  { available: false; reason: string } | { available: true; backlog: number; steps: ScaleStep[]; retention?: ScaleRetention; retentionFraction: number };

export interface ScaleOptions {
  /** Inbox sizes after the empty one, e.g. [1_000_000, 5_000_000]. */
  sizes: number[];
  backlog: number;
  /** Drains per side and size, alternating empty and filled. */
  drainRepeats: number;
  ingest: IngestOptions;
  /** The older share of the filled rows past EVENT_RETENTION_DAYS when retention runs. */
  retentionFraction: number;
}

/** One database in the comparison. */
interface Side {
  name: string;
  url: string;
  db: Database;
}

const MB = 2 ** 20;
const UNFINISHED = `'pending', 'failed'`;

/** Wait until no event after `afterId` is unfinished (the worker has caught up); throws past the deadline. */
async function waitIdle(db: Database, afterId: number, deadlineMs: number): Promise<void> {
  const deadline = performance.now() + deadlineMs;
  for (;;) {
    const [row] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM hookrun.webhook_events WHERE id > $1 AND status IN (${UNFINISHED})`, [afterId]);
    if (row!.n === 0) return;
    if (performance.now() > deadline) throw new Error(`scale bench: ${row!.n} events still unfinished after ${deadlineMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Cumulative scans and tuples read of the inbox's indexes (the statistics survive TRUNCATE, so deltas are taken). */
async function indexStats(db: Database): Promise<Map<string, { scans: number; tuples: number }>> {
  const rows = await db.query<{ name: string; scans: number; tuples: number }>(
    `SELECT indexrelname AS name, idx_scan AS scans, idx_tup_read AS tuples FROM pg_stat_user_indexes WHERE schemaname = 'hookrun' AND relname IN ('webhook_events', 'event_attempts', 'webhook_event_keys', 'handler_deliveries', 'new_events', 'event_search')`,
  );
  return new Map(rows.map((r) => [r.name, { scans: Number(r.scans), tuples: Number(r.tuples) }]));
}

/** Ingest rotation over the sides (one hookrun each, worker running); waits for each worker to catch up before stopping it. */
async function ingest(sides: Side[], options: IngestOptions, progress: (line: string) => void): Promise<IngestFigures[]> {
  const servers: ServerProcess[] = [];
  try {
    for (const side of sides) servers.push((await startHookrun({ kind: 'postgres', url: side.url }, BENCH_SECRET)).server);
    const targets = sides.map((side, i) => ({
      name: side.name,
      server: servers[i]!,
      path: '/webhooks/payments',
      distinct: true,
      databaseCpu: () => backendCpu(side.db),
    }));
    const figures = await runIngest(targets, options, progress);
    for (const side of sides) await waitIdle(side.db, 0, 300_000);
    return figures;
  } finally {
    for (const server of servers) await server.stop();
  }
}

/** A backlog written straight into the inbox (the real insert path), drained by `hookrun start`; rate over its own processed_at span. */
async function drain(
  side: Side,
  backlog: number,
  progress: (line: string) => void,
): Promise<{ perSec: number; drained: number; cpu: { hookrun: number; db: number } }> {
  const [top] = await side.db.query<{ id: number }>('SELECT coalesce(max(id), 0)::bigint AS id FROM hookrun.webhook_events');
  const afterId = Number(top!.id);
  const writer = new EventWriter(side.db);
  const events = makeSignedEvents(backlog);
  await Promise.all(events.map((e) => writer.write({ source: 'payments', key: e.id, type: JSON.parse(e.body).type as string, payloadJson: e.body })));
  const dbBefore = await backendCpu(side.db);
  const { server } = await startHookrun({ kind: 'postgres', url: side.url }, BENCH_SECRET);
  let cpu: { hookrun: number; db: number };
  try {
    await waitIdle(side.db, afterId, 300_000);
    // hookrun's whole life (start-up included) and every backend of the database (this bench's polling included), per drained event.
    const dbAfter = await backendCpu(side.db);
    cpu = { hookrun: cpuMs(server.child.pid!), db: backendCpuSpent(dbBefore, dbAfter) };
  } finally {
    await server.stop();
  }
  const [row] = await side.db.query<{ n: number; span: number | string | null }>(
    `SELECT count(*)::int AS n, extract(epoch FROM max(processed_at) - min(processed_at)) * 1000 AS span
     FROM hookrun.webhook_events WHERE id > $1 AND processed_at IS NOT NULL`,
    [afterId],
  );
  const spanMs = Number(row!.span ?? 0);
  const perSec = spanMs > 0 ? (row!.n * 1000) / spanMs : NaN;
  const perEvent = { hookrun: cpu.hookrun / row!.n, db: cpu.db / row!.n };
  progress(
    `scale: drain ${side.name}: ${row!.n}/${backlog} in ${spanMs.toFixed(0)} ms = ${perSec.toFixed(0)} events/s, CPU ms/event hookrun ${perEvent.hookrun.toFixed(3)} + PostgreSQL ${perEvent.db.toFixed(3)}`,
  );
  return { perSec, drained: row!.n, cpu: perEvent };
}

/** An empty inbox again (fresh files; the mirrors keep their few thousand rows, as on the filled side). */
async function empty(db: Database): Promise<void> {
  await db.query(
    'TRUNCATE hookrun.webhook_events, hookrun.new_events, hookrun.event_search, hookrun.event_attempts, hookrun.delivery_steps, hookrun.handler_deliveries, hookrun.webhook_event_keys, hookrun.event_requests, hookrun.flow_keys, hookrun.handler_controls',
  );
}

async function measureStep(
  size: number,
  fill: { insertMs: number; vacuumMs: number },
  sides: Side[],
  options: ScaleOptions,
  progress: (line: string) => void,
): Promise<ScaleStep> {
  const measured = sides.at(-1)!;
  const bytes = await inboxBytes(measured.db);
  progress(
    `scale: ${measured.name}: ${bytes.rows.toLocaleString('en-US')} rows, webhook_events ${(bytes.events / MB).toFixed(0)} MB, handler_deliveries + event_attempts ${(bytes.deliveries / MB).toFixed(0)} MB`,
  );
  const statusCountsMs = await timeStatusCounts(measured.url);
  progress(`scale: ${measured.name}: status counts ${statusCountsMs.fresh.toFixed(1)} ms, then ${statusCountsMs.next.toFixed(1)} ms`);
  const statsBefore = await Promise.all(sides.map((side) => indexStats(side.db)));
  const figures = await ingest(sides, options.ingest, progress);
  const drains = new Map<string, number[]>(sides.map((s) => [s.name, []]));
  const cpus = new Map<string, Array<{ hookrun: number; db: number }>>(sides.map((s) => [s.name, []]));
  let drained = 0;
  for (let r = 0; r < options.drainRepeats; r++) {
    for (const side of sides) {
      const result = await drain(side, options.backlog, progress);
      drains.get(side.name)!.push(result.perSec);
      cpus.get(side.name)!.push(result.cpu);
      if (side === measured) drained = result.drained;
    }
  }
  const paired = sides.length > 1 ? sides[0]! : undefined;
  await new Promise((resolve) => setTimeout(resolve, 1000)); // statistics reach the shared counters about once a second
  const indexReads: ScaleStep['indexReads'] = {};
  for (const [i, side] of sides.entries()) {
    const after = await indexStats(side.db);
    indexReads[side.name] = Object.fromEntries(
      [...after].map(([name, a]) => [
        name,
        { scans: a.scans - (statsBefore[i]!.get(name)?.scans ?? 0), tuples: a.tuples - (statsBefore[i]!.get(name)?.tuples ?? 0) },
      ]),
    );
    const due = indexReads[side.name]!.handler_deliveries_due_idx;
    if (due)
      progress(
        `scale: ${side.name}: handler_deliveries_due_idx ${due.scans} scans, ${due.tuples} tuples read (${(due.tuples / Math.max(1, due.scans)).toFixed(0)} per scan)`,
      );
  }
  return {
    size,
    rows: bytes.rows,
    fillMs: fill.insertMs,
    vacuumMs: fill.vacuumMs,
    eventsMb: bytes.events / MB,
    deliveriesMb: bytes.deliveries / MB,
    ingest: figures.at(-1)!,
    ingestEmpty: paired ? figures[0] : undefined,
    drainPerSec: spread(drains.get(measured.name)!),
    drainEmptyPerSec: paired ? spread(drains.get(paired.name)!) : undefined,
    drained,
    drainCpu: Object.fromEntries([...cpus].map(([name, list]) => [name, { hookrun: spread(list.map((c) => c.hookrun)), db: spread(list.map((c) => c.db)) }])),
    indexReads,
    statusCountsMs,
  };
}

/** Time the status counts on a Database of its own, so no earlier count is reused by the first call. */
async function timeStatusCounts(url: string): Promise<{ fresh: number; next: number }> {
  const db = await openDatabase({ databaseUrl: url, poolSize: 1 });
  try {
    const started = performance.now();
    await countEventsByStatus(db);
    const between = performance.now();
    await countEventsByStatus(db);
    return { fresh: between - started, next: performance.now() - between };
  } finally {
    await db.close();
  }
}

/**
 * Does cost grow with what is stored? PostgreSQL only. Two databases: one
 * stays empty (truncated before each comparison), the other is filled with
 * processed events straight in SQL (bench/scale-fill.ts) to each size in
 * turn. At each size both take the same ingest rotation and alternate
 * backlog drains; at the largest, retention deletes the older share.
 */
export async function runScale(databaseUrl: string | undefined, options: ScaleOptions, progress: (line: string) => void): Promise<ScaleFigures> {
  if (!databaseUrl) return { available: false, reason: 'no BENCH_DATABASE_URL / TEST_DATABASE_URL (the scale section runs on PostgreSQL only)' };
  const sizes = [...new Set(options.sizes.filter((n) => n > 0))].sort((a, b) => a - b);
  const databases = [await createDatabase(databaseUrl, 'scale_empty'), await createDatabase(databaseUrl, 'scale_filled')];
  const opened: Database[] = [];
  try {
    const [emptySide, filledSide] = await Promise.all(
      databases.map(async (database, i): Promise<Side> => {
        // Fill statements and VACUUM of several GB run far past hookrun's 10 s statement timeout.
        const db = await openDatabase({ databaseUrl: database.url, queryTimeoutMs: 3_600_000, poolSize: 4 });
        opened.push(db);
        await db.migrate();
        return { name: i === 0 ? 'empty' : 'filled', url: database.url, db };
      }),
    );
    const plan: FillPlan = { startedAt: Date.now(), finalSize: sizes.at(-1) ?? 0 };
    await reserveIds(filledSide!.db, plan.finalSize);
    const steps = [await measureStep(0, { insertMs: 0, vacuumMs: 0 }, [emptySide!], options, progress)];
    let filled = 0;
    for (const size of sizes) {
      const fill = await fillProcessed(filledSide!.db, plan, filled, size, progress);
      filled = size;
      progress(
        `scale: filled to ${size.toLocaleString('en-US')} in ${(fill.insertMs / 1000).toFixed(1)} s, VACUUM ANALYZE ${(fill.vacuumMs / 1000).toFixed(1)} s`,
      );
      await empty(emptySide!.db);
      steps.push(await measureStep(size, fill, [emptySide!, filledSide!], options, progress));
    }
    const retention = plan.finalSize > 0 ? await measureRetention(filledSide!.db, plan, options.retentionFraction, progress) : undefined;
    return { available: true, backlog: options.backlog, steps, retention, retentionFraction: options.retentionFraction };
  } finally {
    for (const db of opened) await db.close();
    for (const database of databases) await database.drop();
  }
}
