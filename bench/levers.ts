import { openDatabase } from '../src/db/client.js';
import type { Database, OpenOptions } from '../src/db/database.js';
import { EventWriter } from '../src/db/event-writer.js';
import { createWorker } from '../src/inbox/worker.js';
import { silentLogger } from '../src/log.js';
import { Metrics } from '../src/metrics.js';
import { systemClock } from '../src/clock.js';
import { makeSignedEvents } from './events.js';
import { backendCpu, backendCpuSpent, createDatabase } from './servers.js';
import { spread, type Spread } from './stats.js';

/**
 * The PostgreSQL levers, each measured alone against the shipped
 * schema in the same run: the same distinct Stripe events stored through the
 * real group-commit writer (50 in flight), then drained by the real worker
 * with the shipped handlers, on a fresh database per variant, variants taking
 * turns. Reported per event: PostgreSQL's CPU (its backends serving this
 * database, from /proc) and hookrun's (this process), and the rates.
 */
export interface LeverFigures {
  variant: string;
  what: string;
  ingestPerSecond: Spread;
  drainPerSecond: Spread;
  /** PostgreSQL backends' CPU per event, µs, ingest and drain. */
  serverIngestUs: Spread;
  serverDrainUs: Spread;
  /** This process's CPU per event (driver, writer, worker, handlers), µs. */
  clientIngestUs: Spread;
  clientDrainUs: Spread;
  /** webhook_events with indexes and TOAST after the drain, MB per million events. */
  tableMbPerMillion: number;
}

interface Variant {
  name: string;
  what: string;
  /** SQL applied after the migrations. */
  sql: string[];
  /** How hookrun's statements would change with the lever. */
  rewrite?: (text: string) => string;
  /** Options of the connection beside the shipped ones (`namedStatements: false`: every statement parsed and planned on every run). */
  open?: Partial<OpenOptions>;
}

type Sample = Record<
  'ingestPerSecond' | 'drainPerSecond' | 'serverIngestUs' | 'serverDrainUs' | 'clientIngestUs' | 'clientDrainUs' | 'tableMbPerMillion',
  number
>;

/** The database with every statement passed through `rewrite` (in and out of transactions). */
function rewritten(db: Database, rewrite: ((text: string) => string) | undefined): Database {
  if (!rewrite) return db;
  return {
    ...db,
    query: (text, params) => db.query(rewrite(text), params),
    transaction: (fn) => db.transaction((tx) => fn({ query: (text, params) => tx.query(rewrite(text), params) })),
  };
}

/** Each lever alone; `shipped` is the schema as migrated. */
export const VARIANTS: Variant[] = [
  {
    name: 'shipped',
    what: 'as shipped: payload json (the body as signed), 6 indexes on webhook_events (3 for the console), search keys in event_search, the hot statements planned once prepared on each connection',
    sql: [],
  },
  {
    name: 'no (status, id) index',
    what: 'without webhook_events_status_idx (admin listing by status)',
    sql: ['DROP INDEX hookrun.webhook_events_status_idx'],
  },
  {
    name: 'unnamed statements',
    what: 'every statement parsed and planned on every run (DATABASE_PREPARED_STATEMENTS=off)',
    sql: [],
    open: { namedStatements: false },
  },
  {
    name: 'partial status index',
    what: '(status, id) only for statuses that are not processed',
    sql: [
      'DROP INDEX hookrun.webhook_events_status_idx',
      "CREATE INDEX webhook_events_status_idx ON hookrun.webhook_events (status, id) WHERE status <> 'processed'",
    ],
  },
];

async function measure(baseUrl: string, variant: Variant, events: number): Promise<Sample> {
  const database = await createDatabase(baseUrl, 'lever');
  const opened = await openDatabase({ databaseUrl: database.url, poolSize: 10, namedStatements: true, ...variant.open }); // as shipped, unless the lever says otherwise
  const db = rewritten(opened, variant.rewrite);
  try {
    await db.migrate();
    for (const statement of variant.sql) await db.query(statement);
    const signed = makeSignedEvents(events);
    const writer = new EventWriter(db);
    // Warm the pool so every backend exists before the CPU is read.
    await Promise.all(Array.from({ length: 10 }, () => db.query('SELECT 1')));
    let server = await backendCpu(db);
    let client = process.cpuUsage();
    let started = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 50 }, async () => {
        while (next < signed.length) {
          const e = signed[next++]!;
          await writer.write({ source: 'payments', key: e.id, type: JSON.parse(e.body).type as string, payloadJson: e.body });
        }
      }),
    );
    const ingestMs = performance.now() - started;
    const serverIngest = backendCpuSpent(server, await backendCpu(db));
    const clientIngest = process.cpuUsage(client);

    const worker = createWorker({
      db,
      config: { maxAttempts: 10, leaseSeconds: 30, handlerTimeoutSeconds: 30, shutdownTimeoutMs: 8000 },
      clock: systemClock,
      log: silentLogger,
      metrics: new Metrics(),
    });
    server = await backendCpu(db);
    client = process.cpuUsage();
    started = performance.now();
    while ((await worker.runOnce()) > 0);
    const drainMs = performance.now() - started;
    const serverDrain = backendCpuSpent(server, await backendCpu(db));
    const clientDrain = process.cpuUsage(client);
    const [size] = await db.query<{ bytes: string }>("SELECT pg_total_relation_size('hookrun.webhook_events') AS bytes");
    return {
      ingestPerSecond: (events / ingestMs) * 1000,
      drainPerSecond: (events / drainMs) * 1000,
      serverIngestUs: (serverIngest * 1000) / events,
      serverDrainUs: (serverDrain * 1000) / events,
      clientIngestUs: (clientIngest.user + clientIngest.system) / events,
      clientDrainUs: (clientDrain.user + clientDrain.system) / events,
      tableMbPerMillion: (Number(size!.bytes) / 2 ** 20) * (1_000_000 / events),
    };
  } finally {
    await opened.close();
    await database.drop();
  }
}

/** Every variant, `rounds` times in turn (A B C A B C), on fresh databases. */
export async function runLevers(
  baseUrl: string | undefined,
  rounds: number,
  events: number,
  progress: (line: string) => void,
): Promise<LeverFigures[] | undefined> {
  if (!baseUrl) {
    progress('levers: skipped (PostgreSQL only: set BENCH_DATABASE_URL)');
    return undefined;
  }
  const samples = new Map<string, Sample[]>(VARIANTS.map((v) => [v.name, []]));
  for (const variant of VARIANTS) await measure(baseUrl, variant, Math.min(events, 2000)); // warm-up: JIT and caches, not recorded
  for (let round = 1; round <= rounds; round++) {
    for (const variant of VARIANTS) {
      const figures = await measure(baseUrl, variant, events);
      samples.get(variant.name)!.push(figures);
      progress(
        `levers round ${round}/${rounds} ${variant.name}: ingest ${figures.ingestPerSecond.toFixed(0)}/s (PG ${figures.serverIngestUs.toFixed(0)} µs, hookrun ${figures.clientIngestUs.toFixed(0)} µs per event), drain ${figures.drainPerSecond.toFixed(0)}/s (PG ${figures.serverDrainUs.toFixed(0)} µs, hookrun ${figures.clientDrainUs.toFixed(0)} µs)`,
      );
    }
  }
  return VARIANTS.map((variant) => {
    const list = samples.get(variant.name)!;
    const of = (field: keyof Sample) => spread(list.map((s) => s[field]));
    return {
      variant: variant.name,
      what: variant.what,
      ingestPerSecond: of('ingestPerSecond'),
      drainPerSecond: of('drainPerSecond'),
      serverIngestUs: of('serverIngestUs'),
      serverDrainUs: of('serverDrainUs'),
      clientIngestUs: of('clientIngestUs'),
      clientDrainUs: of('clientDrainUs'),
      tableMbPerMillion: of('tableMbPerMillion').median,
    };
  });
}
