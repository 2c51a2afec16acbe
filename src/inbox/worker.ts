import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Database } from '../db/client.js';
import { EVENTS_CHANNEL, claimDueEvents, nextDueAt, releaseClaims, settleEvents, type ClaimedEvent, type Settlement } from '../db/inbox-queue.js';
import { messageOf } from '../errors.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import { createDefaultHandlers } from './handlers/defaults.js';
import { MalformedPayloadError, type HandlerRegistry } from './handlers/registry.js';
import { DEFAULT_RETRY_POLICY, computeBackoffMs, hasAttemptsLeft, type RetryPolicy } from './retry.js';

/** Tuning knobs; the defaults suit production, tests shrink them. */
export interface WorkerOptions {
  /** Events per claim (small: a claim's lease runs while its batch is handled). Default 10. */
  batchSize?: number;
  /** Longest idle sleep: picks up retries and other instances' rows. Default 1000 ms. */
  pollIntervalMs?: number;
  retry?: Partial<Omit<RetryPolicy, 'maxAttempts'>>;
  /** Jitter source, injectable for tests. */
  random?: () => number;
}

/** What the worker needs; `handlers` defaults to the shipped auth/payments/database handlers. */
export interface WorkerDeps {
  db: Database;
  config: Pick<Config, 'maxAttempts' | 'leaseSeconds' | 'shutdownTimeoutMs'>;
  clock: Clock;
  log: Logger;
  metrics: Metrics;
  handlers?: HandlerRegistry;
  options?: WorkerOptions;
}

/** The inbox worker's controls (DESIGN.md "Processing"). */
export interface Worker {
  /** Begin the claim loop and LISTEN on `hookrun_events`. */
  start(): void;
  /** A new event was committed: claim now instead of at the next poll. Cheap; call freely. */
  wake(): void;
  /** Stop claiming, finish the current batch (bounded by shutdownTimeoutMs) and release unstarted claims. */
  stop(): Promise<void>;
  /** Claim and process one batch; resolves to how many events were claimed (tests, CLI). */
  runOnce(): Promise<number>;
}

const MAX_ERROR_CHARS = 2000;
const DB_BACKOFF_BASE_MS = 500;
const DB_BACKOFF_MAX_MS = 30_000;
const LISTEN_RETRY_MS = 30_000;
const MIN_DUE_SLEEP_MS = 25;

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Build the worker: claim due events (`FOR UPDATE SKIP LOCKED`, so instances
 * share work), run each batch's handlers side by side, settle the batch in one
 * statement. Woken at once by `wake()` and by NOTIFY on `hookrun_events`;
 * otherwise it sleeps until the next retry is due, at most `pollIntervalMs`.
 * A database outage is logged and retried with capped backoff, never thrown.
 */
export function createWorker(deps: WorkerDeps): Worker {
  const { db, config, clock, log, metrics } = deps;
  const handlers = deps.handlers ?? createDefaultHandlers();
  const batchSize = deps.options?.batchSize ?? 10;
  const pollIntervalMs = deps.options?.pollIntervalMs ?? 1000;
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...deps.options?.retry, maxAttempts: config.maxAttempts };
  const random = deps.options?.random ?? Math.random;
  const leaseMs = config.leaseSeconds * 1000;
  // Give up on a handler before its lease ends, so no other instance takes the event while it still runs.
  const handlerTimeoutMs = Math.max(leaseMs / 2, leaseMs - 5000);

  let started = false;
  let stopping = false;
  let wakePending = false;
  let sleeper: { timer: NodeJS.Timeout; resolve: () => void } | undefined;
  let loopDone: Promise<void> | undefined;
  let unlisten: (() => Promise<void>) | undefined;
  let lastListenAttempt = -Infinity;
  const inFlight = new Set<Promise<unknown>>();

  async function handle(event: ClaimedEvent): Promise<Settlement> {
    const base = { id: event.id, attempts: event.attempts };
    const handler = handlers.find(event.source, event.type);
    if (!handler) return { ...base, status: 'ignored' };
    if (event.attempts > policy.maxAttempts) {
      return { ...base, status: 'dead', error: `Claimed ${event.attempts} times without finishing (the worker crashed or stopped each time). Fix the cause, then replay it.` };
    }
    const startedAt = performance.now();
    let settlement: Settlement;
    try {
      const handlerLog = log.child({ eventId: event.id, source: event.source, type: event.type });
      await withTimeout(handler({ db, event, clock, log: handlerLog }), handlerTimeoutMs, `The handler did not finish within ${handlerTimeoutMs} ms.`);
      settlement = { ...base, status: 'processed' };
    } catch (error) {
      const message = messageOf(error).slice(0, MAX_ERROR_CHARS);
      if (error instanceof MalformedPayloadError) {
        settlement = { ...base, status: 'dead', error: message };
      } else if (!hasAttemptsLeft(event.attempts, policy)) {
        settlement = { ...base, status: 'dead', error: `${message} (gave up after ${event.attempts} attempts)` };
      } else {
        const nextAttemptAt = new Date(clock.now() + computeBackoffMs(event.attempts, policy, random));
        settlement = { ...base, status: 'failed', error: message, nextAttemptAt };
      }
      const level = settlement.status === 'dead' ? 'error' : 'warn';
      log[level]({ eventId: event.id, source: event.source, type: event.type, attempts: event.attempts, err: { message } }, `event ${settlement.status}`);
    }
    metrics.processingDuration.observe({ source: event.source, outcome: settlement.status }, (performance.now() - startedAt) / 1000);
    return settlement;
  }

  async function runBatch(): Promise<number> {
    const claims = await claimDueEvents(db, { now: clock.now(), leaseMs, limit: batchSize });
    if (claims.length === 0) return 0;
    if (stopping) {
      await releaseClaims(db, claims);
      return 0;
    }
    const settlements = await Promise.all(claims.map(handle));
    const owned = new Set(await settleEvents(db, settlements, clock.now()));
    for (const [index, settlement] of settlements.entries()) {
      if (!owned.has(settlement.id)) {
        log.warn({ eventId: settlement.id }, 'lease lost before settling: another worker claimed the event again');
        continue;
      }
      metrics.eventsProcessed.inc({ source: claims[index]!.source, outcome: settlement.status });
    }
    return claims.length;
  }

  function track<T>(promise: Promise<T>): Promise<T> {
    inFlight.add(promise);
    void promise.finally(() => inFlight.delete(promise)).catch(() => undefined);
    return promise;
  }

  function sleep(ms: number): Promise<void> {
    if (wakePending || stopping) return Promise.resolve();
    return new Promise((resolve) => {
      sleeper = { resolve, timer: setTimeout(() => { sleeper = undefined; resolve(); }, ms) };
    });
  }

  async function ensureListening(): Promise<void> {
    if (unlisten || stopping || performance.now() - lastListenAttempt < LISTEN_RETRY_MS) return;
    lastListenAttempt = performance.now();
    try {
      unlisten = await db.listen(EVENTS_CHANNEL, () => worker.wake());
      if (stopping) await unlisten();
    } catch (error) {
      log.warn({ err: { message: messageOf(error) } }, `cannot LISTEN on ${EVENTS_CHANNEL}; polling every ${pollIntervalMs} ms instead`);
    }
  }

  async function loop(): Promise<void> {
    let failures = 0;
    while (!stopping) {
      let delayMs: number;
      try {
        await ensureListening(); // before the claim: an event committed after it is claimed now or NOTIFYs
        wakePending = false;
        const claimed = await track(runBatch());
        if (failures > 0) log.info({ failures }, 'database reachable again; processing resumed');
        failures = 0;
        if (claimed > 0) continue;
        const due = await nextDueAt(db);
        delayMs = due === undefined ? pollIntervalMs : Math.min(pollIntervalMs, Math.max(MIN_DUE_SLEEP_MS, due - clock.now()));
      } catch (error) {
        failures += 1;
        const ceiling = Math.min(DB_BACKOFF_MAX_MS, DB_BACKOFF_BASE_MS * 2 ** Math.min(failures - 1, 16));
        delayMs = Math.round(ceiling / 2 + (ceiling / 2) * Math.random());
        const level = failures === 1 ? 'error' : 'warn';
        log[level]({ failures, retryInMs: delayMs, err: { message: messageOf(error) } }, 'inbox worker cannot reach the database; backing off');
      }
      await sleep(delayMs);
    }
  }

  const worker: Worker = {
    start() {
      if (started) return;
      started = true;
      loopDone = loop();
    },
    wake() {
      wakePending = true;
      if (sleeper) {
        clearTimeout(sleeper.timer);
        const { resolve } = sleeper;
        sleeper = undefined;
        resolve();
      }
    },
    async stop() {
      stopping = true;
      worker.wake();
      let timer: NodeJS.Timeout | undefined;
      const finished = await Promise.race([
        Promise.allSettled([loopDone, ...inFlight]).then(() => true),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(false), config.shutdownTimeoutMs);
        }),
      ]);
      clearTimeout(timer);
      if (!finished) log.warn(`inbox worker: handlers still running after ${config.shutdownTimeoutMs} ms; their claims expire after the lease and are retried`);
      await unlisten?.().catch(() => undefined);
      unlisten = undefined;
    },
    runOnce: () => track(runBatch()),
  };
  return worker;
}
