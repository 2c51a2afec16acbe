import type { Clock } from '../clock.js';
import type { Config } from '../config/config.js';
import { backoffMs } from '../backoff.js';
import { WakeableSleep } from '../wakeable-sleep.js';
import type { Database } from '../db/database.js';
import { letIngestGoFirst, type IngestQueue } from '../db/ingest-first.js';
import { EVENTS_CHANNEL, nextDueAt } from './queue-sql.js';
import { messageOf } from '../errors.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import { createDefaultHandlers } from './handlers/defaults.js';
import type { HandlerRegistry } from '../deliveries/registry.js';
import type { BatchDeps } from './batch-deps.js';
import { createBatchRunner } from './batch.js';
import { createFlowLoop } from '../flow/loop.js';
import { FlowRunner } from '../flow/runner.js';
import { HandlerLanes } from './lanes.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from '../deliveries/retry.js';

/** Tuning knobs; the defaults suit production, tests shrink them. */
export interface WorkerOptions {
  /** Events per claim; a batch's handlers share one transaction (one commit per batch). Default 100. */
  batchSize?: number;
  /** Longest idle sleep: picks up retries and other instances' rows. Default 1000 ms. */
  pollIntervalMs?: number;
  retry?: Partial<Omit<RetryPolicy, 'maxAttempts'>>;
  /** How long a handler past its time limit is waited for after its abort signal. Default 5000 ms. */
  abortGraceMs?: number;
  /** Jitter source of every backoff (event retries, database outages), injectable for tests. */
  random?: () => number;
  /** How far ahead rate-limited deliveries are claimed, each then started at its slot. Default 50 ms; 0 with an injected clock. */
  flowHorizonMs?: number;
  /** Deliveries of one flow-controlled handler this instance runs at once. Default 16. */
  flowLocalLimit?: number;
}

/** What the worker needs; `handlers` defaults to the shipped auth/payments/database handlers. */
export interface WorkerDeps {
  db: Database;
  config: Pick<Config, 'maxAttempts' | 'leaseSeconds' | 'handlerTimeoutSeconds' | 'shutdownTimeoutMs'>;
  clock: Clock;
  log: Logger;
  metrics: Metrics;
  handlers?: HandlerRegistry;
  options?: WorkerOptions;
  /**
   * The receivers' group-commit writer (its `queued` deliveries). Where the
   * database asks for it (`tuning.yieldToIngestMs`, PGlite's one session), a
   * waiting insert goes first.
   */
  ingest?: IngestQueue;
  /** Told of each event that goes `dead`, after it is committed (alerts). */
  onDead?: BatchDeps['onDead'];
}

/** The inbox worker's controls: the service starts and stops it, tests drive it one batch at a time. */
export interface Worker {
  /** Begin the claim loop and LISTEN on `hookrun_events`. */
  start(): void;
  /** A new event was committed: claim now instead of at the next poll. Cheap; call freely. */
  wake(): void;
  /** Stop claiming, finish the current batch (bounded by shutdownTimeoutMs) and release unstarted claims. */
  stop(): Promise<void>;
  /**
   * Claim and process one batch (new events become deliveries, inline ones run), or else one round of flow-controlled
   * deliveries (waiting for them); resolves to how many were claimed (tests, CLI, on-demand passes). With `finishBy`
   * (a performance.now() time the process may be cut at), the claim is sized to the time left and each delivery commits on its own.
   */
  runOnce(finishBy?: number): Promise<number>;
}

/** Waiting out a database outage: 0.5 s, doubling, capped at 30 s, with jitter. */
const DB_BACKOFF = { baseMs: 500, maxMs: 30_000 };
const LISTEN_RETRY_MS = 30_000;
const MIN_DUE_SLEEP_MS = 25;
/**
 * An on-demand pass (a serverless function's processing after its answers, the drain route) shares the process
 * with the receivers on every database: before each delivery it lets their queued inserts go first, at most this long.
 */
const ON_DEMAND_YIELD_MS = 100;

/**
 * Build the worker: a loop that claims due events (`FOR UPDATE SKIP LOCKED`,
 * so instances share work) and hands each claim to the batch room
 * (batch.ts). Woken at once by `wake()` and by NOTIFY on `hookrun_events`;
 * otherwise it sleeps until the next retry is due, at most `pollIntervalMs`.
 * A database outage is logged and retried with capped backoff, never thrown.
 * How hard it drives the database (lanes, yielding, idle maintenance) is the
 * database's own `tuning`.
 */
export function createWorker(deps: WorkerDeps): Worker {
  const { db, config, clock, log } = deps;
  const tuning = db.tuning;
  const batchSize = deps.options?.batchSize ?? 100;
  const pollIntervalMs = deps.options?.pollIntervalMs ?? 1000;
  const random = deps.options?.random ?? Math.random;
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...deps.options?.retry, maxAttempts: config.maxAttempts };
  const handlers = deps.handlers ?? createDefaultHandlers();
  const lanes = new HandlerLanes(handlers, pollIntervalMs);
  const flow = new FlowRunner({
    ...{ db, handlers, clock, log, policy, random, pollIntervalMs, metrics: deps.metrics },
    leaseMs: config.leaseSeconds * 1000,
    handlerTimeoutMs: config.handlerTimeoutSeconds * 1000,
    abortGraceMs: deps.options?.abortGraceMs ?? 5000,
    runDeps: { clock, log, abortGraceMs: deps.options?.abortGraceMs ?? 5000 },
    horizonMs: deps.options?.flowHorizonMs ?? 50,
    localLimit: deps.options?.flowLocalLimit ?? 16,
    wake: () => flowLoop.wake(),
    onDead: deps.onDead,
  });
  const flowLoop = createFlowLoop(flow, { clock, log, pollIntervalMs, random });
  const batches = createBatchRunner({
    ...{ db, handlers, clock, log, metrics: deps.metrics, policy, random, batchSize },
    leaseMs: config.leaseSeconds * 1000,
    handlerTimeoutMs: config.handlerTimeoutSeconds * 1000,
    abortGraceMs: deps.options?.abortGraceMs ?? 5000,
    isStopping: () => stopping,
    lanes: () => lanes.current(),
    onDead: deps.onDead,
    onFlowWork: () => {
      flow.markDirty();
      flowLoop.wake();
    },
    yieldToIngest: () => yieldToIngest(Math.max(ON_DEMAND_YIELD_MS, tuning.yieldToIngestMs ?? 0)),
  });

  let started = false;
  let stopping = false;
  const sleeper = new WakeableSleep();
  let loopDone: Promise<void> | undefined;
  let unlisten: (() => Promise<void>) | undefined;
  let lastListenAttempt = -Infinity;
  const inFlight = new Set<Promise<unknown>>();

  function track<T>(promise: Promise<T>): Promise<T> {
    inFlight.add(promise);
    void promise.finally(() => inFlight.delete(promise)).catch(() => undefined);
    return promise;
  }

  const sleep = (ms: number): Promise<void> => (stopping ? Promise.resolve() : sleeper.sleep(ms));

  /** Let the receivers' waiting inserts go first, at most `boundMs` (the database's own bound by default): processing never starves. */
  async function yieldToIngest(boundMs = tuning.yieldToIngestMs): Promise<void> {
    await letIngestGoFirst(deps.ingest, boundMs ?? 0, () => stopping);
  }

  let lastListenError: string | undefined;
  async function ensureListening(): Promise<void> {
    if (unlisten || stopping || performance.now() - lastListenAttempt < LISTEN_RETRY_MS) return;
    lastListenAttempt = performance.now();
    try {
      unlisten = await db.listen(EVENTS_CHANNEL, () => worker.wake());
      if (stopping) await unlisten();
    } catch (error) {
      // Said once per cause: behind a transaction pooler the same refusal comes back every retry.
      if (messageOf(error) === lastListenError) return;
      lastListenError = messageOf(error);
      log.warn({ err: { message: lastListenError } }, `cannot LISTEN on ${EVENTS_CHANNEL}; polling every ${pollIntervalMs} ms instead`);
    }
  }

  /** Claim until idle, then sleep until woken or the next retry is due; back off while the database is down. */
  async function loop(): Promise<void> {
    let failures = 0;
    let backlog = false;
    let processedSinceMaintenance = 0;
    while (!stopping) {
      let delayMs: number;
      try {
        await ensureListening(); // before the claim: an event committed after it is claimed now or NOTIFYs
        await yieldToIngest();
        sleeper.clear();
        await lanes.refresh(db); // which handlers are paused, before the inbox decides what runs inline
        const parallel: number = backlog ? tuning.lanes : 1;
        const claimed: number = await track(
          Promise.all(Array.from({ length: parallel }, () => batches.run())).then((counts) => counts.reduce((a, b) => a + b, 0)),
        );
        backlog = claimed >= batchSize;
        if (failures > 0) log.info({ failures }, 'database reachable again; processing resumed');
        failures = 0;
        processedSinceMaintenance += claimed;
        if (claimed > 0) continue;
        const maintenance = tuning.idleMaintenance;
        if (maintenance && processedSinceMaintenance >= maintenance.every) {
          processedSinceMaintenance = 0;
          await maintenance.run();
        }
        const due = await nextDueAt(db, lanes.current().inline);
        delayMs = due === undefined ? pollIntervalMs : Math.min(pollIntervalMs, Math.max(MIN_DUE_SLEEP_MS, due - clock.now()));
      } catch (error) {
        if (lostDeadlock(error)) {
          // PostgreSQL broke a lock cycle with another instance by rolling this batch back: nothing settled, its events are claimed again.
          log.info({ err: { message: messageOf(error) } }, 'inbox batch rolled back by a deadlock with another instance; claiming again');
          continue;
        }
        failures += 1;
        delayMs = backoffMs(failures, DB_BACKOFF, random);
        log[failures === 1 ? 'error' : 'warn'](
          { failures, retryInMs: delayMs, err: { message: messageOf(error) } },
          'inbox worker cannot reach the database; backing off',
        );
      }
      await sleep(delayMs);
    }
  }

  const worker: Worker = {
    start() {
      if (started) return;
      started = true;
      loopDone = loop();
      flowLoop.start();
    },
    wake: () => sleeper.wake(),
    async stop() {
      stopping = true;
      worker.wake();
      let timer: NodeJS.Timeout | undefined;
      const finished = await Promise.race([
        Promise.allSettled([loopDone, ...inFlight, flowLoop.stop()]).then(() => true),
        new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), config.shutdownTimeoutMs))),
      ]);
      clearTimeout(timer);
      if (!finished) log.warn(`inbox worker: handlers still running after ${config.shutdownTimeoutMs} ms; their claims expire after the lease and are retried`);
      await unlisten?.().catch(() => undefined);
      unlisten = undefined;
    },
    runOnce: (finishBy) => track(lanes.refresh(db, true).then(async () => (await batches.run(finishBy)) || flow.runOnce())),
  };
  return worker;
}

/** PostgreSQL's deadlock_detected (40P01): one side of a lock cycle, rolled back whole; retrying is the documented answer. */
function lostDeadlock(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '40P01';
}
