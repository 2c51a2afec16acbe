import autocannon from 'autocannon';
import { makeSignedEvents, type SignedEvent } from './events.js';
import { backendCpuSpent, cpuMs, rssMb, type ServerProcess } from './servers.js';
import { spread, type Spread } from './stats.js';

/** One server in the A B A B rotation. */
export interface Target {
  name: string;
  server: ServerProcess;
  path: string;
  /** Needs distinct, freshly signed events (hookrun); hello-world takes any. */
  distinct: boolean;
  /** CPU ms so far of each PostgreSQL backend serving it, by pid (the database's share of a request). */
  databaseCpu?: () => Promise<Map<number, number>>;
  /** Events processed so far (hookrun's worker): after a round the bench waits for the round's events to be processed and counts that CPU too. */
  processedTotal?: () => Promise<number>;
  /** Other processes that process this target's events (`hookrun worker` beside `start --no-worker`): their CPU counts in the processed figure. */
  workers?: ServerProcess[];
}

/** What one round of one target measured. */
export interface Round {
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  /** Connection errors and timeouts (not answered at all). */
  errors: number;
  cpuMsPerRequest: number;
  /** PostgreSQL backends' CPU over the round per 2xx answer, where the target says which backends serve it. */
  dbCpuMsPerRequest?: number;
  /**
   * CPU from the round's start until the worker had processed every event the
   * round accepted, per accepted event: the whole cost of an event, where the
   * round's own figure leaves out what the worker does after the round.
   */
  cpuMsPerProcessed?: number;
  /** The PostgreSQL backends' share of the same span, per accepted event. */
  dbCpuMsPerProcessed?: number;
  /** How long after the round's last answer the worker finished the round's events (ms). */
  drainAfterMs?: number;
  /** Highest VmRSS sampled during the round. */
  peakRssMb: number;
  /** Requests that reused an event because the pre-generated pool ran out (duplicates). */
  reused: number;
}

/** A target's figures over all rounds. */
export interface IngestFigures {
  name: string;
  rounds: Round[];
  reqPerSec: Spread;
  p50Ms: Spread;
  p99Ms: Spread;
  non2xx: number;
  errors: number;
  cpuMsPerRequest: Spread;
  dbCpuMsPerRequest?: Spread;
  cpuMsPerProcessed?: Spread;
  dbCpuMsPerProcessed?: Spread;
  drainAfterMs?: Spread;
  peakRssMb: number;
  reused: number;
}

/** Settings of the rotation. */
export interface IngestOptions {
  rounds: number;
  seconds: number;
  /** An unrecorded round per target first (0: none; the smoke run, whose timings are not judged). */
  warmupSeconds: number;
  connections: number;
}

// The headers Stripe's webhook sender puts on every delivery (besides Stripe-Signature).
const STRIPE_HEADERS = {
  'content-type': 'application/json; charset=utf-8',
  'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
  'cache-control': 'no-cache',
  accept: '*/*; q=0.5, application/xml',
};

class EventPool {
  events: SignedEvent[] = [];
  private next = 0;
  private wrapped = false;
  /** Requests sent after the pool wrapped around (duplicates). */
  reused = 0;

  refill(count: number): void {
    this.events = makeSignedEvents(count);
    this.next = 0;
    this.wrapped = false;
    this.reused = 0;
  }

  take(): SignedEvent {
    if (this.next >= this.events.length) {
      this.next = 0;
      this.wrapped = true;
    }
    if (this.wrapped) this.reused++;
    return this.events[this.next++]!;
  }
}

/** Bounded wait for the worker after a round; a worker that has not caught up by then is reported as not processed ("–"). */
const PROCESSED_WAIT_MS = 120_000;

/** Poll until `processedTotal()` reaches `target`; the time it took, or undefined past the bound. */
async function waitProcessed(processedTotal: () => Promise<number>, target: number): Promise<number | undefined> {
  const started = performance.now();
  while (performance.now() - started < PROCESSED_WAIT_MS) {
    if ((await processedTotal()) >= target) return performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return undefined;
}

async function round(target: Target, pool: EventPool, seconds: number, connections: number): Promise<Round> {
  const pid = target.server.child.pid!;
  const processedBefore = await target.processedTotal?.();
  const workersCpu = () => (target.workers ?? []).reduce((sum, w) => sum + cpuMs(w.child.pid!), 0);
  const workersBefore = workersCpu();
  const cpuBefore = cpuMs(pid);
  const dbBefore = await target.databaseCpu?.();
  let peakRss = rssMb(pid);
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, rssMb(pid));
  }, 200);
  const result = await autocannon({
    url: target.server.url,
    connections,
    duration: seconds,
    timeout: 10,
    requests: [
      {
        method: 'POST',
        path: target.path,
        setupRequest: (request) => {
          const event = pool.take();
          request.body = event.body;
          request.headers = { ...STRIPE_HEADERS, 'stripe-signature': event.signature };
          return request;
        },
      },
    ],
  });
  const cpu = cpuMs(pid) - cpuBefore;
  const dbAfter = await target.databaseCpu?.();
  // A backend that started during the round counts in full; one that ended is lost (pooled backends live on under load).
  const dbCpu = dbBefore && dbAfter ? backendCpuSpent(dbBefore, dbAfter) : undefined;
  clearInterval(sampler);
  peakRss = Math.max(peakRss, rssMb(pid));
  const ok = result['2xx'];
  // The worker's share: wait until it has processed what the round accepted, then count the CPU again.
  let processed: Pick<Round, 'cpuMsPerProcessed' | 'dbCpuMsPerProcessed' | 'drainAfterMs'> = {};
  if (target.processedTotal && processedBefore !== undefined && ok > 0) {
    const drainAfterMs = await waitProcessed(target.processedTotal, processedBefore + ok);
    if (drainAfterMs !== undefined) {
      const cpuProcessed = cpuMs(pid) - cpuBefore + workersCpu() - workersBefore;
      const dbProcessed = dbBefore ? await target.databaseCpu?.() : undefined;
      processed = {
        drainAfterMs,
        cpuMsPerProcessed: cpuProcessed / ok,
        dbCpuMsPerProcessed: dbBefore && dbProcessed ? backendCpuSpent(dbBefore, dbProcessed) / ok : undefined,
      };
    }
  }
  return {
    ...processed,
    reqPerSec: ok / seconds,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    cpuMsPerRequest: ok > 0 ? cpu / ok : NaN,
    dbCpuMsPerRequest: dbCpu === undefined ? undefined : ok > 0 ? dbCpu / ok : NaN,
    peakRssMb: peakRss,
    reused: pool.reused,
  };
}

/**
 * Alternate rounds between the targets (A B A B …) so drift on a shared
 * machine hits every target alike; each hookrun round gets a fresh pool of
 * distinct events, sized from the previous round so none repeats.
 */
export async function runIngest(targets: Target[], options: IngestOptions, progress: (line: string) => void): Promise<IngestFigures[]> {
  const pool = new EventPool();
  const expected = new Map<string, number>();
  const poolSize = (target: Target, seconds: number) => Math.ceil(Math.max(expected.get(target.name) ?? 0, 3_000) * seconds * 2) + 2_000;
  for (const target of options.warmupSeconds > 0 ? targets : []) {
    pool.refill(poolSize(target, options.warmupSeconds));
    const warm = await round(target, pool, options.warmupSeconds, options.connections);
    expected.set(target.name, warm.reqPerSec);
    progress(`warm-up ${target.name}: ${Math.round(warm.reqPerSec)} req/s`);
  }
  const rounds = new Map<string, Round[]>(targets.map((t) => [t.name, []]));
  for (let r = 0; r < options.rounds; r++) {
    for (const target of targets) {
      if (target.distinct || pool.events.length === 0) pool.refill(poolSize(target, options.seconds));
      const result = await round(target, pool, options.seconds, options.connections);
      expected.set(target.name, Math.max(result.reqPerSec, expected.get(target.name) ?? 0));
      rounds.get(target.name)!.push(result);
      const whole =
        result.cpuMsPerProcessed === undefined
          ? ''
          : `, ${result.cpuMsPerProcessed.toFixed(3)} ms CPU/event processed (+${Math.round(result.drainAfterMs ?? 0)} ms)`;
      progress(
        `round ${r + 1}/${options.rounds} ${target.name}: ${Math.round(result.reqPerSec)} req/s, p99 ${result.p99Ms} ms, ${result.cpuMsPerRequest.toFixed(3)} ms CPU/req${whole}, non-2xx ${result.non2xx}`,
      );
    }
  }
  return targets.map((target) => {
    const list = rounds.get(target.name)!;
    return {
      name: target.name,
      rounds: list,
      reqPerSec: spread(list.map((r) => r.reqPerSec)),
      p50Ms: spread(list.map((r) => r.p50Ms)),
      p99Ms: spread(list.map((r) => r.p99Ms)),
      non2xx: list.reduce((sum, r) => sum + r.non2xx, 0),
      errors: list.reduce((sum, r) => sum + r.errors, 0),
      cpuMsPerRequest: spread(list.map((r) => r.cpuMsPerRequest)),
      dbCpuMsPerRequest: target.databaseCpu ? spread(list.map((r) => r.dbCpuMsPerRequest ?? NaN)) : undefined,
      cpuMsPerProcessed: target.processedTotal ? spread(list.map((r) => r.cpuMsPerProcessed ?? NaN)) : undefined,
      dbCpuMsPerProcessed: target.processedTotal && target.databaseCpu ? spread(list.map((r) => r.dbCpuMsPerProcessed ?? NaN)) : undefined,
      drainAfterMs: target.processedTotal ? spread(list.map((r) => r.drainAfterMs ?? NaN)) : undefined,
      peakRssMb: Math.max(...list.map((r) => r.peakRssMb)),
      reused: target.distinct ? list.reduce((sum, r) => sum + r.reused, 0) : 0,
    };
  });
}
