import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Database, Queryable } from '../db/client.js';
import { EVENTS_CHANNEL, claimDueEvents, nextDueAt, releaseClaims, settleEvents, type ClaimedEvent, type Settlement } from '../db/inbox-queue.js';
import { MirrorBatch, type DeferringQueryable } from '../db/mirror-batch.js';
import { withDeadline } from '../deadline.js';
import { messageOf } from '../errors.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import { createDefaultHandlers } from './handlers/defaults.js';
import { MalformedPayloadError, type HandlerRegistry } from './handlers/registry.js';
import { DEFAULT_RETRY_POLICY, computeBackoffMs, hasAttemptsLeft, type RetryPolicy } from './retry.js';

/** Tuning knobs; the defaults suit production, tests shrink them. */
export interface WorkerOptions {
  /** Events per claim; a batch's handlers share one transaction (one commit per batch). Default 100. */
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
  /**
   * The receivers' group-commit writer (its `queued` deliveries). On PGlite (one
   * session) the worker lets a waiting insert go first, up to `MAX_YIELD_MS`.
   */
  ingest?: { readonly queued: number };
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

/** PGlite: a handler may hold the one session inside a batch this long before its type runs alone. */
const PGLITE_IN_TRANSACTION_BUDGET_MS = 1000;
/** PGlite: the longest the worker waits for the receivers' queue to empty before it claims anyway. */
const MAX_YIELD_MS = 200;
const YIELD_POLL_MS = 2;
/** PGlite: vacuum the inbox when the worker goes idle after this many events. */
const VACUUM_EVERY_EVENTS = 5000;

/** A handler ran past its time limit. */
class HandlerTimeout extends Error {}
/** Thrown inside the batch transaction to roll it back and fall back to one event at a time. */
const BATCH_ABANDONED = new Error('batch abandoned');

const typeKey = (event: ClaimedEvent) => `${event.source}\u0000${event.type}`;

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
  const batchSize = deps.options?.batchSize ?? 100;
  const pollIntervalMs = deps.options?.pollIntervalMs ?? 1000;
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...deps.options?.retry, maxAttempts: config.maxAttempts };
  const random = deps.options?.random ?? Math.random;
  const leaseMs = config.leaseSeconds * 1000;
  // Give up on a handler before its lease ends, so no other instance takes the event while it still runs.
  const handlerTimeoutMs = Math.max(leaseMs / 2, leaseMs - 5000);
  // PostgreSQL: a batch transaction blocks nobody else (row locks aside). PGlite: it holds the only session.
  const inTransactionBudgetMs = db.kind === 'pglite' ? Math.min(handlerTimeoutMs, PGLITE_IN_TRANSACTION_BUDGET_MS) : handlerTimeoutMs;
  /** (source, type) pairs that proved too slow for a shared transaction on PGlite. */
  const slowTypes = new Set<string>();

  let started = false;
  let stopping = false;
  let wakePending = false;
  let sleeper: { timer: NodeJS.Timeout; resolve: () => void } | undefined;
  let loopDone: Promise<void> | undefined;
  let unlisten: (() => Promise<void>) | undefined;
  let lastListenAttempt = -Infinity;
  let lastClaimFull = false;
  let processedSinceVacuum = 0;
  const inFlight = new Set<Promise<unknown>>();

  /** A settlement decided without running a handler: no handler, or claimed too often. */
  function settleWithoutHandler(event: ClaimedEvent): Settlement | undefined {
    const base = { id: event.id, attempts: event.attempts };
    if (!handlers.find(event.source, event.type)) return { ...base, status: 'ignored' };
    if (event.attempts > policy.maxAttempts) {
      return { ...base, status: 'dead', error: `Claimed ${event.attempts} times without finishing (the worker crashed or stopped each time). Fix the cause, then replay it.` };
    }
    return undefined;
  }

  function failure(event: ClaimedEvent, error: unknown): Settlement {
    const base = { id: event.id, attempts: event.attempts };
    const message = messageOf(error).slice(0, MAX_ERROR_CHARS);
    let settlement: Settlement;
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
    return settlement;
  }

  /** Run the event's handler on `q` within `timeoutMs` (a `HandlerTimeout` when it does not finish). */
  async function runHandler(event: ClaimedEvent, q: Queryable, timeoutMs: number): Promise<void> {
    const handler = handlers.find(event.source, event.type)!;
    const handlerLog = log.child({ eventId: event.id, source: event.source, type: event.type });
    await withDeadline(handler({ db: q, event, clock, log: handlerLog }), timeoutMs, () => new HandlerTimeout(`The handler did not finish within ${timeoutMs} ms.`));
  }

  /** One event on its own (no shared transaction): the fallback path and slow handlers. */
  async function handleAlone(event: ClaimedEvent): Promise<Settlement> {
    const startedAt = performance.now();
    let settlement: Settlement;
    try {
      await runHandler(event, db, handlerTimeoutMs);
      settlement = { id: event.id, attempts: event.attempts, status: 'processed' };
    } catch (error) {
      settlement = failure(event, error);
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
    const fixed: Settlement[] = [];
    const batched: ClaimedEvent[] = [];
    const alone: ClaimedEvent[] = [];
    for (const event of claims) {
      const settlement = settleWithoutHandler(event);
      if (settlement) fixed.push(settlement);
      else (slowTypes.has(typeKey(event)) ? alone : batched).push(event);
    }
    let result = await runInOneTransaction(batched, alone.length === 0 ? fixed : []);
    if (result.kind === 'fallback') {
      // The shared transaction rolled back: every event whose outcome it did not decide runs on its own.
      const decided = new Set(result.decided.map((s) => s.id));
      const rerun = [...batched.filter((e) => !decided.has(e.id)), ...alone];
      const settlements = [...fixed, ...result.decided, ...(await Promise.all(rerun.map(handleAlone)))];
      result = { kind: 'committed', settlements, owned: await settleEvents(db, settlements, clock.now()) };
    } else if (alone.length > 0) {
      const settlements = [...fixed, ...(await Promise.all(alone.map(handleAlone)))];
      result.settlements.push(...settlements);
      result.owned.push(...(await settleEvents(db, settlements, clock.now())));
    }
    const owned = new Set(result.owned);
    const byId = new Map(claims.map((c) => [c.id, c]));
    for (const settlement of result.settlements) {
      if (!owned.has(settlement.id)) {
        log.warn({ eventId: settlement.id }, 'lease lost before settling: another worker claimed the event again');
        continue;
      }
      metrics.eventsProcessed.inc({ source: byId.get(settlement.id)!.source, outcome: settlement.status });
    }
    return claims.length;
  }

  type BatchResult = { kind: 'committed'; settlements: Settlement[]; owned: number[] } | { kind: 'fallback'; decided: Settlement[] };

  /**
   * The batch's handlers one after another in ONE transaction, settled in it:
   * one commit for the whole batch, and state change and outcome commit
   * together. A handler that throws without breaking the transaction (e.g. a
   * malformed payload) fails only its own event. A failed statement aborts
   * the transaction: it rolls back and the batch falls back to one event at a
   * time, keeping the outcome of the event that broke it. On PGlite (one
   * session) a handler slower than the in-transaction budget would hold up
   * ingest: the batch rolls back and that type runs on its own from then on.
   */
  async function runInOneTransaction(events: ClaimedEvent[], fixed: Settlement[]): Promise<BatchResult> {
    if (events.length === 0) {
      const settlements = [...fixed];
      return { kind: 'committed', settlements, owned: await settleEvents(db, settlements, clock.now()) };
    }
    const state: { brokenBy: number | undefined; abandoned: boolean } = { brokenBy: undefined, abandoned: false };
    const decided: Settlement[] = [];
    try {
      return await db.transaction(async (tx) => {
        let current = 0;
        const mirrorBatch = new MirrorBatch();
        const q: DeferringQueryable = {
          mirrorBatch,
          async query<T>(text: string, params?: unknown[]): Promise<T[]> {
            if (state.abandoned || state.brokenBy !== undefined) throw new Error('The batch transaction was abandoned; the event is retried on its own.');
            try {
              return await tx.query<T>(text, params);
            } catch (error) {
              state.brokenBy ??= current;
              throw error;
            }
          },
        };
        const settlements = [...fixed];
        const observed: Array<[ClaimedEvent, Settlement, number]> = [];
        for (const event of events) {
          current = event.id;
          const startedAt = performance.now();
          try {
            await runHandler(event, q, inTransactionBudgetMs);
            settlements.push({ id: event.id, attempts: event.attempts, status: 'processed' });
            observed.push([event, settlements.at(-1)!, performance.now() - startedAt]);
          } catch (error) {
            if (error instanceof HandlerTimeout && inTransactionBudgetMs < handlerTimeoutMs) {
              slowTypes.add(typeKey(event));
              log.info({ source: event.source, type: event.type }, `handler took over ${inTransactionBudgetMs} ms inside a batch; it runs on its own from now on`);
              throw BATCH_ABANDONED;
            }
            const settlement = failure(event, error);
            if (error instanceof HandlerTimeout || state.brokenBy !== undefined) {
              if (state.brokenBy === event.id || error instanceof HandlerTimeout) decided.push(settlement);
              throw BATCH_ABANDONED;
            }
            settlements.push(settlement);
            observed.push([event, settlement, performance.now() - startedAt]);
          }
        }
        current = -1; // a failing deferred write is no single event's: everything runs on its own
        await mirrorBatch.flush(q);
        const owned = await settleEvents(tx, settlements, clock.now());
        for (const [event, settlement, ms] of observed) {
          metrics.processingDuration.observe({ source: event.source, outcome: settlement.status }, ms / 1000);
        }
        return { kind: 'committed', settlements, owned } as BatchResult;
      });
    } catch (error) {
      state.abandoned = true; // a handler still running from a timed-out call must not write any more
      if (error !== BATCH_ABANDONED) log.warn({ err: { message: messageOf(error) } }, 'batch transaction failed; processing its events one at a time');
      return { kind: 'fallback', decided };
    }
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

  /** PGlite: let the receivers' waiting inserts go first (bounded, so processing never starves under load). */
  async function yieldToIngest(): Promise<void> {
    const ingest = deps.ingest;
    if (!ingest || db.kind !== 'pglite') return;
    const deadline = performance.now() + MAX_YIELD_MS;
    while (ingest.queued > 0 && !stopping && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, YIELD_POLL_MS));
    }
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
        await yieldToIngest();
        wakePending = false;
        // PostgreSQL with a backlog: two batches side by side (SKIP LOCKED keeps them disjoint), so the
        // database works on one while this process runs the other's handlers.
        const lanes = db.kind === 'postgres' && lastClaimFull ? 2 : 1;
        const claimed = await track(lanes === 1 ? runBatch() : Promise.all([runBatch(), runBatch()]).then(([a, b]) => a + b));
        lastClaimFull = claimed >= batchSize;
        if (failures > 0) log.info({ failures }, 'database reachable again; processing resumed');
        failures = 0;
        processedSinceVacuum += claimed;
        if (claimed > 0) continue;
        if (db.kind === 'pglite' && processedSinceVacuum >= VACUUM_EVERY_EVENTS) {
          // PGlite runs without autovacuum: each event leaves two dead row versions (claim, settle) in the heap and indexes.
          processedSinceVacuum = 0;
          await db.query('VACUUM webhook_events');
        }
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
